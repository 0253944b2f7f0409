"""bundled."""
