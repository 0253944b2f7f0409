"""``culturebias build libra`` / ``culturebias.build_libra`` composed: ``adapters.libra_build.wiring``'s build with
the mapping LLM opened as a model backend (``bootstrap.build_cli.model_generator``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from culturebias.adapters.libra_build.wiring import BuildSettings, import_libra_review
from culturebias.adapters.libra_build import wiring
from culturebias.application.libra_build.service import BuildReport
from culturebias.bootstrap.build_cli import model_generator

__all__ = ["BuildSettings", "build_libra", "import_libra_review"]


def build_libra(corpus: str | Path, seeds: str | Path, out: str | Path, **options: Any) -> BuildReport:  # Any: wiring.build_libra's keyword options
    """Build LIBRA triplets from a local corpus into ``out``; the options are ``adapters.libra_build.wiring.build_libra``'s
    (steps, resume, text_field, settings, expander, clusterer)."""
    return wiring.build_libra(corpus, seeds, out, **{"generators": model_generator, **options})
