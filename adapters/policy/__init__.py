"""Acceptance policies in files and the formats their verdicts go out in: TOML and Gherkin readers, JUnit XML."""
