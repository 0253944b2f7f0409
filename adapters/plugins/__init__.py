"""What the registry holds: the descriptors of benchmarks, model backends and result stores (built-in or plugin)."""
