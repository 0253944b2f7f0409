"""A small seeded scikit-learn classifier of bias-irrelevant documents (the LIBRA build's clean step)."""
