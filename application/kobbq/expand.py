"""``culturebias expand kobbq --out FILE``: ``KoBBQ_templates.tsv`` to samples, one JSON object per line.

``data.path`` names the templates file or its folder (the bundled copy when
unset); the samples have the format of ``KoBBQ_test_samples.tsv`` (choices as a
JSON list). ``--set protocol.versions=a,b`` keeps only those template versions.
``--set protocol.sample=per_template`` keeps one drawn combination per template
and version pair, as the released test split was drawn
(``domain/kobbq/sampling.py``; ``protocol.seed``, default 0). The file can be
evaluated with ``--set data.path=FILE``. A full expansion reports its count beside
the paper's (Table 1: 76,048 samples; the released file expands to 76,568, and
the released file is the truth, PROTOCOLS §2).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Iterator, Mapping

from culturebias.domain.bbq.evaluators import template_version
from culturebias.domain.kobbq.sampling import sample_per_template
from culturebias.domain.kobbq.templates import expand_templates
from culturebias.domain.errors import ConfigError
from culturebias.domain.option_types import option_list
from culturebias.ports.template_files import KoBBQTemplateFiles, RowsWriter

PAPER_SAMPLES = 76_048  # KoBBQ paper, Table 1
# The ``--set protocol.<key>`` keys ``expand kobbq`` reads (listed by ``culturebias expand --help``).
EXPAND_KEYS = {
    "versions": "template versions to keep, e.g. a,b (default all: a, b, c, d)",
    "sample": "all (every combination, the default) or per_template (one drawn combination per template and version pair)",
    "seed": "the draw's seed for sample=per_template (default 0)",
}


def paper_count_line(count: int, count_ab: int, versions: list[str] | None, how: str) -> str:
    """The expansion's count against the paper's Table 1 (only a full expansion compares).

    The paper counts 76,048; the released templates expand to 76,568, or 76,088 in
    versions a and b (the versions the paper's per-category counts match).
    """
    if versions is None and how == "all":
        return (
            f"{count:,} samples from the released templates ({count_ab:,} in versions a and b); the paper's Table 1 "
            f"counts {PAPER_SAMPLES:,} ({count - PAPER_SAMPLES:+,} in all versions, {count_ab - PAPER_SAMPLES:+,} in a "
            "and b): the released file is the truth (PROTOCOLS §2)"
        )
    return f"{count:,} samples (the paper's Table 1 count, {PAPER_SAMPLES:,}, is of a full expansion)"


def expand_kobbq(protocol: Mapping[str, Any], templates: KoBBQTemplateFiles, write: RowsWriter) -> int:  # Any: TOML/JSON values
    """Expand the templates with ``protocol``'s versions and sampling into ``write``; returns the samples written."""
    versions = option_list(protocol, "versions")
    rows = templates.rows()
    per_category: Counter = Counter()
    per_version: Counter = Counter()

    how = protocol.get("sample", "all")
    if how not in ("all", "per_template"):
        raise ConfigError(f"protocol.sample must be all or per_template, got {how!r}")
    try:
        seed = int(protocol.get("seed", 0))
    except (TypeError, ValueError):
        raise ConfigError(f"protocol.seed must be a whole number, got {protocol.get('seed')!r}") from None

    def expanded() -> Iterable[Mapping[str, Any]]:  # Any: a sample's JSON values
        samples = expand_templates(rows, versions=versions)
        return sample_per_template(samples, seed) if how == "per_template" else samples

    def counted() -> Iterator[Mapping[str, Any]]:  # Any: a sample's JSON values
        for sample in expanded():
            per_category[sample["sample_id"].split("-", 1)[0]] += 1
            per_version[template_version(sample["sample_id"])] += 1
            yield sample

    count = write(counted())
    for category, n in sorted(per_category.items()):
        print(f"  {category}: {n}")
    print(paper_count_line(count, per_version["a"] + per_version["b"], versions, how))
    return count
