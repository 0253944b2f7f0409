"""openai."""
