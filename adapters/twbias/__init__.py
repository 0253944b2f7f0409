"""TWBias (Taiwan): its data files, result-file replay, report and comparison report."""
