"""KoBBQ (Korea): what is KoBBQ's own on top of the shared BBQ core (domain/bbq)."""
