"""Files a run writes on this machine: the output folder (ports/output_folders.py) and flat tables (ports/exports.py, ports/template_files.py)."""
