"""LIBRA's dataset build wired (``culturebias build libra``): its settings, its components opened, its command line."""
