"""The LIBRA dataset build (PROTOCOLS §4 construction): six resumable steps over ports."""
