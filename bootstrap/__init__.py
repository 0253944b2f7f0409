"""Composition root: typed configuration, the dependency-injector container, logging and the CLI."""
