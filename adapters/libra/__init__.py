"""LIBRA (New Zealand): its data files (triplets, glossary, StereoSet), report and comparison report."""
