"""mcbe."""
