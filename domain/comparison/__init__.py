"""Comparisons of finished runs: the common envelope, the checks that runs are comparable, significance marks.

Each benchmark's cross-model views live beside its summary model
(``domain/<bench>/comparison.py``); they read typed summaries only.
"""
