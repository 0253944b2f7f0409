"""KoBBQ's own use cases (its template expander)."""
