"""Reference text generated from the code: setting keys from the settings and options models, the docs site's tables."""
