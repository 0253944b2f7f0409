"""The docs site's reference tables, as Markdown, from the setting keys and the registered descriptors.

The site's pages hold markers such as ``<!-- generated:configuration -->``; :meth:`ReferencePages.render`
replaces each with its table. The sources are given (``bootstrap/reference_pages.py`` reads them from the
settings models and the registry, the same sources ``culturebias run --help`` and ``culturebias list`` read).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from culturebias.adapters.docs.setting_keys import SettingKey
from culturebias.adapters.plugins.descriptors import BackendDescriptor, BenchmarkDescriptor, StoreDescriptor

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


@dataclass(frozen=True)
class ReferenceSources:
    """Where the tables' rows come from, read when a table is made."""

    keys: Callable[[], Sequence[SettingKey]]
    benchmarks: Callable[[], Sequence[BenchmarkDescriptor]]
    benchmark: Callable[[str], BenchmarkDescriptor]  # one by name; an unknown name is its error
    backends: Callable[[], Sequence[BackendDescriptor]]
    stores: Callable[[], Sequence[StoreDescriptor]]


class ReferencePages:
    """The generated tables by marker name, and the page text with its markers replaced."""

    def __init__(self, sources: ReferenceSources):
        self._sources = sources
        self.pages: dict[str, Callable[..., str]] = {
            "configuration": self.configuration_reference,
            "settings": self.section_table,
            "benchmarks": self.benchmark_table,
            "headlines": self.headline_table,
            "limits": self.limit_table,
            "backends": self.backend_table,
            "stores": self.store_table,
        }

    def _groups(self) -> dict[str, list[SettingKey]]:
        groups: dict[str, list[SettingKey]] = {}
        for key in self._sources.keys():
            groups.setdefault(_section_of(key), []).append(key)
        return groups

    def configuration_reference(self) -> str:
        """Every setting key, grouped by section, backend and benchmark: key, type, default, description."""
        out = []
        for title, keys in self._groups().items():
            heading = f"`{title}.*`" if " " not in title else f"{title.split(' ', 1)[0]} `{title.split(' ', 1)[1]}`"
            out.append(f"### {heading}\n")
            out.append(_key_table(keys) + "\n")
        return "\n".join(out)

    def section_table(self, section: str) -> str:
        """The keys of one section (``ray``, ``run``, ...) as a table, for the page that explains them."""
        groups = self._groups()
        if section not in groups:
            raise KeyError(f"no settings section {section!r} (known: {', '.join(sorted(groups))})")
        return _key_table(groups[section])

    def benchmark_table(self) -> str:
        """One row per registered benchmark: name, culture, language, data and licence, headline metrics."""
        rows = []
        for benchmark in self._sources.benchmarks():
            data = "bundled" if benchmark.bundled_data else "bring your own (`data.path`)"
            if benchmark.data_note:
                data += f"; {_cell(benchmark.data_note)}"
            headlines = ", ".join(f"`{h.name}`" for h in benchmark.headline_metrics())
            rows.append((f"`{benchmark.name}`", _cell(benchmark.culture), _cell(benchmark.language), data, _cell(benchmark.data_licence), headlines))
        return _table(("benchmark", "culture", "language", "data", "data licence", "headline metrics"), rows)

    def headline_table(self, name: str) -> str:
        """A benchmark's headline metrics: what `culturebias check` criteria and the headline card name."""
        rows = [
            (
                f"`{h.name}`",
                _cell(h.label),
                _cell(h.direction + (f" (to {h.target:g})" if h.target is not None and h.direction == "closer" else "")),
                _cell(f"{h.low:g} to {h.high:g}") if h.low is not None and h.high is not None else "",
                _cell(h.meaning),
            )
            for h in self._sources.benchmark(name).headline_metrics()
        ]
        return _table(("metric", "label", "better", "range", "meaning"), rows)

    def limit_table(self) -> str:
        """What ``--limit N`` evaluates of each benchmark: its options model's ``limit`` description."""
        rows = []
        for benchmark in self._sources.benchmarks():
            field = benchmark.options_model().model_fields.get("limit")
            if field is not None:
                rows.append((benchmark.name, _cell(field.description or "")))
        return _table(("benchmark", "`--limit N` evaluates only"), rows)

    def backend_table(self) -> str:
        """One row per registered model backend: name, what it is, what it can do."""
        rows = [(f"`{b.name}`", _cell(b.description), ", ".join(sorted(b.capabilities))) for b in self._sources.backends()]
        return _table(("backend", "what it is", "can"), rows)

    def store_table(self) -> str:
        """One row per registered result store."""
        return _table(("store", "what it is"), [(f"`{s.name}`", _cell(s.description)) for s in self._sources.stores()])

    def render(self, markdown: str) -> str:
        """Replace every ``<!-- generated:NAME [ARG] -->`` marker; an unknown NAME is an error."""

        def one(match: re.Match[str]) -> str:
            name, arg = match.group(1), match.group(2)
            if name not in self.pages:
                raise KeyError(f"unknown generated table {name!r} (known: {', '.join(sorted(self.pages))})")
            return self.pages[name](arg) if arg else self.pages[name]()

        return MARKER.sub(one, markdown)
