"""Files of the LIBRA build: corpus documents, seed files and the review sheet (CSV, XLSX)."""
