"""KoBBQ (Korea): its data files (the shared BBQ report and comparison live in adapters/reports)."""
