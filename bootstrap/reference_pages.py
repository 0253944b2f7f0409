"""Reference tables of the docs site, generated from the code so that nothing is written twice.

The site's pages hold markers such as ``<!-- generated:configuration -->``; the MkDocs hook
(``docs/hooks.py``) replaces each with :func:`render` at build time. The tables come from the
settings and options models (every key, its type, default and description) and from the registry
(benchmarks, their headline metrics, backends and stores), the same sources ``culturebias run --help``
and ``culturebias list`` read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, StoreDescriptor, registry
from culturebias.bootstrap.settings_reference import SettingKey, setting_keys

MARKER = re.compile(r"<!-- generated:(\w+)(?: (\w+))? -->")


def _cell(text: str) -> str:
    """Plain text in a table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    """Code in a table cell; alternatives (``a|b``) as separate code spans, since a pipe would split the cell."""
    parts = [part for part in text.split("|") if part]
    return " or ".join(f"`{part}`" for part in parts) if parts else ""


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _section_of(key: SettingKey) -> str:
    if key.owner:
        return key.owner
    return key.key.rsplit(".", 1)[0] if key.key.startswith("model.sampling.") else key.key.split(".", 1)[0]


def _key_table(keys: Sequence[SettingKey]) -> str:
    rows = [(_code(k.key), _code(k.type), _code(k.default), _cell(k.description)) for k in keys]
    return _table(("key", "type", "default", "description"), rows)


def _groups() -> dict[str, list[SettingKey]]:
    groups: dict[str, list[SettingKey]] = {}
    for key in setting_keys():
        groups.setdefault(_section_of(key), []).append(key)
    return groups


def configuration_reference() -> str:
    """Every setting key, grouped by section, backend and benchmark: key, type, default, description."""
    out = []
    for title, keys in _groups().items():
        heading = f"`{title}.*`" if " " not in title else f"{title.split(' ', 1)[0]} `{title.split(' ', 1)[1]}`"
        out.append(f"### {heading}\n")
        out.append(_key_table(keys) + "\n")
    return "\n".join(out)


def section_table(section: str) -> str:
    """The keys of one section (``ray``, ``run``, ...) as a table, for the page that explains them."""
    groups = _groups()
    if section not in groups:
        raise KeyError(f"no settings section {section!r} (known: {', '.join(sorted(groups))})")
    return _key_table(groups[section])


def benchmark_table() -> str:
    """One row per registered benchmark: name, culture, language, data and licence, headline metrics."""
    rows = []
    for benchmark in registry().benchmarks.all():
        if not isinstance(benchmark, BenchmarkDescriptor):
            continue
        data = "bundled" if benchmark.bundled_data else "bring your own (`data.path`)"
        if benchmark.data_note:
            data += f"; {_cell(benchmark.data_note)}"
        headlines = ", ".join(f"`{h.name}`" for h in benchmark.headline_metrics())
        rows.append((f"`{benchmark.name}`", _cell(benchmark.culture), _cell(benchmark.language), data, _cell(benchmark.data_licence), headlines))
    return _table(("benchmark", "culture", "language", "data", "data licence", "headline metrics"), rows)


def headline_table(name: str) -> str:
    """A benchmark's headline metrics: what `culturebias check` criteria and the headline card name."""
    benchmark = registry().benchmark(name)
    rows = [
        (
            f"`{h.name}`",
            _cell(h.label),
            _cell(h.direction + (f" (to {h.target:g})" if h.target is not None and h.direction == "closer" else "")),
            _cell(f"{h.low:g} to {h.high:g}") if h.low is not None and h.high is not None else "",
            _cell(h.meaning),
        )
        for h in benchmark.headline_metrics()
    ]
    return _table(("metric", "label", "better", "range", "meaning"), rows)


def limit_table() -> str:
    """What ``--limit N`` evaluates of each benchmark: its options model's ``limit`` description."""
    rows = []
    for benchmark in registry().benchmarks.all():
        if isinstance(benchmark, BenchmarkDescriptor):
            field = benchmark.options_model().model_fields.get("limit")
            if field is not None:
                rows.append((benchmark.name, _cell(field.description or "")))
    return _table(("benchmark", "`--limit N` evaluates only"), rows)


def backend_table() -> str:
    """One row per registered model backend: name, what it is, what it can do."""
    rows = [
        (f"`{b.name}`", _cell(b.description), ", ".join(sorted(b.capabilities)))
        for b in registry().backends.all()
        if isinstance(b, BackendDescriptor)
    ]
    return _table(("backend", "what it is", "can"), rows)


def store_table() -> str:
    """One row per registered result store."""
    rows = [(f"`{s.name}`", _cell(s.description)) for s in registry().stores.all() if isinstance(s, StoreDescriptor)]
    return _table(("store", "what it is"), rows)


PAGES: dict[str, Callable[..., str]] = {
    "configuration": configuration_reference,
    "settings": section_table,
    "benchmarks": benchmark_table,
    "headlines": headline_table,
    "limits": limit_table,
    "backends": backend_table,
    "stores": store_table,
}


def render(markdown: str) -> str:
    """Replace every ``<!-- generated:NAME [ARG] -->`` marker; an unknown NAME is an error."""

    def one(match: re.Match[str]) -> str:
        name, arg = match.group(1), match.group(2)
        if name not in PAGES:
            raise KeyError(f"unknown generated table {name!r} (known: {', '.join(sorted(PAGES))})")
        return PAGES[name](arg) if arg else PAGES[name]()

    return MARKER.sub(one, markdown)
