"""Progress reporters (ports/progress.py): a tqdm bar, callbacks to an embedding host, or silence."""
