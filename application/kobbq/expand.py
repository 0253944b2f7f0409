"""``culturebias expand kobbq --out FILE``: ``KoBBQ_templates.tsv`` to samples, one JSON object per line.

``data.path`` names the templates file or its folder (the bundled copy when
unset); the samples have the format of ``KoBBQ_test_samples.tsv`` (choices as a
JSON list). ``--set protocol.versions=a,b`` keeps only those template versions.
``--set protocol.sample=per_template`` keeps one drawn combination per template
and version pair, as the released test split was drawn
(``domain/kobbq/sampling.py``; ``protocol.seed``, default 0). The file can be
evaluated with ``--set data.path=FILE``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Iterator, Mapping

from culturebias.domain.kobbq.sampling import sample_per_template
from culturebias.domain.kobbq.templates import expand_templates
from culturebias.domain.errors import ConfigError
from culturebias.domain.option_types import option_list
from culturebias.ports.template_files import KoBBQTemplateFiles, RowsWriter


def expand_kobbq(protocol: Mapping[str, Any], templates: KoBBQTemplateFiles, write: RowsWriter) -> int:  # Any: TOML/JSON values
    """Expand the templates with ``protocol``'s versions and sampling into ``write``; returns the samples written."""
    versions = option_list(protocol, "versions")
    rows = templates.rows()
    per_category: Counter = Counter()

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
            yield sample

    count = write(counted())
    for category, n in sorted(per_category.items()):
        print(f"  {category}: {n}")
    return count
