"""LIBRA's dataset-building pipeline (PROTOCOLS §4, "Dataset construction"): its typed values."""
