"""``culturebias build <benchmark>``: one sub-command per benchmark whose descriptor names a ``builder``.

A builder (``ports.dataset_building.DatasetBuilder``; a plugin may ship one) has ``add_parser(kinds, name)``,
which adds the benchmark's parser to ``build``'s sub-commands, and ``build_command(args, generators) -> int``,
which runs it; ``generators`` opens a model the build asks (``model_generator``).
"""

from __future__ import annotations

import argparse
from typing import Any

from culturebias.ports.generation import Generator


def builders() -> list[tuple[str, Any]]:  # Any: the builders' parser hooks
    from culturebias.bootstrap.registry import BenchmarkDescriptor, registry, resolve

    return [
        (d.name, resolve(d.builder))
        for d in registry().benchmarks.all()
        if isinstance(d, BenchmarkDescriptor) and d.builder is not None
    ]


def add_build_parsers(sub: Any) -> None:  # Any: argparse's subparsers
    build = sub.add_parser("build", help="build a benchmark's dataset from a local corpus")
    kinds = build.add_subparsers(dest="dataset", required=True)
    for name, builder in builders():
        builder.add_parser(kinds, name)


def build(args: argparse.Namespace) -> int:
    """``culturebias build BENCHMARK ...``: the named benchmark's builder runs the command."""
    builder = dict(builders())[args.dataset]
    return int(builder.build_command(args, model_generator))


def model_generator(path: str) -> Generator:
    """The Generator port of the model ``path`` names as ``model.path`` does (the hf backend, the default cache)."""
    from culturebias.bootstrap.container import build_model_backend, default_cache_dir
    from culturebias.bootstrap.settings import ModelSettings, Settings

    options = ModelSettings.model_validate({"backend": "hf", "path": path}).backend_options()
    return build_model_backend(options, default_cache_dir(Settings())).generator()
