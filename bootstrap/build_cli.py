"""``culturebias build <benchmark>``: one sub-command per benchmark whose descriptor names a ``builder``.

A builder is any object (a plugin may ship one) with ``add_parser(kinds, name)``, which adds the
benchmark's parser to ``build``'s sub-commands, and ``build_command(args) -> int``, which runs it.
"""

from __future__ import annotations

import argparse
from typing import Any


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
    return int(builder.build_command(args))
