"""``culturebias build <benchmark>`` for LIBRA's dataset-building pipeline: a thin layer over
``adapters.libra_build.wiring``. LIBRA's descriptor names it as its ``builder`` (``ports.dataset_building.DatasetBuilder``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

from culturebias.application.libra_build.service import STEPS
from culturebias.domain.errors import ConfigError
from culturebias.ports.dataset_building import GeneratorOf


def add_parser(kinds: argparse._SubParsersAction, name: str) -> None:  # type: ignore[type-arg]  # argparse's private generic
    libra = kinds.add_parser(
        name,
        help="LIBRA triplets from a local corpus (PROTOCOLS §4 construction)",
        description="Build triplets.jsonl, glossary.jsonl, review.csv/.xlsx and report.md in --out; "
        f"the folder is a data.path for `culturebias run {name}`.",
    )
    libra.add_argument("--corpus", type=Path, help="a .txt/.jsonl/.csv file or a folder of them")
    libra.add_argument("--seeds", type=Path, help="JSON or TOML: group -> keywords or {category, keywords, anti}")
    libra.add_argument("--out", type=Path, required=True)
    libra.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated subset of {','.join(STEPS)}")
    libra.add_argument("--resume", action="store_true", help="reuse the steps already stored for the same inputs")
    libra.add_argument("--text-field", default="text", help="JSONL key / CSV column holding the text (default: text)")
    libra.add_argument("--import-review", type=Path, default=None, metavar="SHEET",
                       help="apply an edited review sheet (CSV or XLSX) to --out's triplets instead of building")
    libra.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                       help="seed=N, expander=default|embedding|association|none, clusterer=default|none, embedder=minilm, "
                       "cleaner=rules|classifier, names=ner|list, perturber=table|embedding")


def build_command(args: argparse.Namespace, generators: GeneratorOf) -> int:
    from culturebias.adapters.libra_build.wiring import build_libra, import_libra_review

    if args.import_review is not None:
        counts = import_libra_review(args.out, args.import_review)
        print(", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no rows")
        return 0
    if args.corpus is None or args.seeds is None:
        raise ConfigError(f"culturebias build {args.dataset} needs --corpus and --seeds (or --import-review SHEET)")
    settings: dict[str, object] = {}
    for item in args.assignments:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE")
        # A dotted key sets a nested option: --set cluster.mapping=llm.
        *parents, leaf = key.strip().split(".")
        section = settings
        for part in parents:
            nested = section.setdefault(part, {})
            if not isinstance(nested, dict):
                raise ConfigError(f"--set {item!r}: {part!r} is an option, not a section")
            section = nested
        section[leaf] = value.strip()
    report = build_libra(args.corpus, args.seeds, args.out, steps=args.steps, resume=args.resume,
                         text_field=args.text_field, settings=settings, generators=generators)
    print(f"{report.candidates} triplets ({report.not_perturbable} hits not perturbable) in {args.out}")
    return 0


# What LIBRA's descriptor names as its ``builder``.
BUILDER = SimpleNamespace(add_parser=add_parser, build_command=build_command)
