"""General lexicons of a language (the Lexicon port of ports/lexicon.py): LIBRA's knowledge boundary."""
