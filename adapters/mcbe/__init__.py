"""McBE (China): its spreadsheets, report, fidelity section and comparison report."""
