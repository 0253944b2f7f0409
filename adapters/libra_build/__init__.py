"""The LIBRA build's adapters (culturebias build libra): corpus files, cleaning, seed expansion and topic clustering."""
