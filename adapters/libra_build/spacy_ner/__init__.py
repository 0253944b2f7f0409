"""People's names found by a spaCy named-entity model (the LIBRA build's clean step)."""
