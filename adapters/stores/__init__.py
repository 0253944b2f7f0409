"""Result stores: SQLite (default, one embedded file) and JSONL files."""
