"""CBBQ (China): what is CBBQ's own on top of the shared BBQ core (domain/bbq)."""
