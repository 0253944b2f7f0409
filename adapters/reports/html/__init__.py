"""Self-contained HTML reports (report.html, comparison.html): inline CSS/JS, embedded figures, no fetches."""
