"""libra."""
