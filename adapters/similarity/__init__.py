"""Sentence embedders (the TextEmbedder port of ports/similarity.py): LIBRA's knowledge boundary and its build."""
