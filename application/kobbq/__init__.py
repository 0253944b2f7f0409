"""KoBBQ (Korea): its protocol service on the shared BBQ core (application/bbq)."""
