"""Topic clustering by UMAP (umap-learn) and HDBSCAN (scikit-learn). Needs the ``build`` extra."""
