"""The replay backend: answers produced elsewhere, read from a JSONL file (or a folder of TWBias result CSVs)."""
