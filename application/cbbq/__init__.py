"""CBBQ's own use cases (its template expander)."""
