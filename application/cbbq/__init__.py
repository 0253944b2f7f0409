"""CBBQ (China): its protocol service and template expander, on the shared BBQ core (application/bbq)."""
