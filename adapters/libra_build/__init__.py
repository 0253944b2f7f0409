"""LIBRA's dataset build (``culturebias build libra``): its wiring, command line and component adapters (corpus files, cleaning, seed expansion, topic clustering)."""
