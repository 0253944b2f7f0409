"""The LLM judge over any Generator port (the judging port of ports/judging.py)."""
