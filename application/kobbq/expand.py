"""``culturebias expand kobbq|cbbq --out FILE``: template files to items, one JSON object per line.

KoBBQ: ``KoBBQ_templates.tsv`` (``data.path`` = the file or its folder; the
bundled copy when unset) → samples in the format of ``KoBBQ_test_samples.tsv``
(choices as a JSON list). ``--set protocol.versions=a,b`` keeps only those
template versions. ``--set protocol.sample=per_template`` keeps one drawn
combination per template and version pair, as the released test split was
drawn (``domain/bbq/kobbq_sampling.py``; ``protocol.seed``, default 0). The
file can be evaluated with ``--set data.path=FILE``.

CBBQ: ``{category}/{ambiguous,disambiguous}/templates_generate_{neg,nonneg}.csv``
(``data.path`` = the CBBQ folder; the bundled categories when unset) →
instances in the format of ``ambiguous.csv``/``disambiguous.csv``, plus
``category`` and ``context_condition``. ``--set protocol.categories=a,b``
narrows; ``--set protocol.disambiguated_order=first_mention|full`` chooses how
the second order of mention is written in disambiguated contexts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping

from culturebias.adapters.datasets import cbbq_files, kobbq_files
from culturebias.domain.bbq.cbbq_templates import expand_condition
from culturebias.domain.bbq.kobbq_sampling import sample_per_template
from culturebias.domain.bbq.kobbq_templates import expand_templates
from culturebias.domain.errors import ConfigError


def _option_list(protocol: Mapping[str, Any], name: str) -> list[str] | None:
    value = protocol.get(name)
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v).strip() for v in value]


def _write_jsonl(rows: Iterable[dict], out_path: Path) -> int:
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".part")
    count = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(out_path)
    return count


def expand_kobbq(protocol: Mapping[str, Any], data_path: str | None, out_path: Path) -> int:
    versions = _option_list(protocol, "versions")
    path = kobbq_files.templates_path(data_path)
    rows = kobbq_files.read_templates(path)
    per_category: Counter = Counter()

    how = protocol.get("sample", "all")
    if how not in ("all", "per_template"):
        raise ConfigError(f"protocol.sample must be all or per_template, got {how!r}")
    try:
        seed = int(protocol.get("seed", 0))
    except (TypeError, ValueError):
        raise ConfigError(f"protocol.seed must be a whole number, got {protocol.get('seed')!r}") from None

    def expanded():
        samples = expand_templates(rows, versions=versions)
        return sample_per_template(samples, seed) if how == "per_template" else samples

    def counted():
        for sample in expanded():
            per_category[sample["sample_id"].split("-", 1)[0]] += 1
            yield sample

    count = _write_jsonl(counted(), out_path)
    for category, n in sorted(per_category.items()):
        print(f"  {category}: {n}")
    return count


def expand_cbbq(protocol: Mapping[str, Any], data_path: str | None, out_path: Path) -> int:
    root = cbbq_files.BUNDLED if data_path is None else Path(data_path).expanduser()
    if not root.is_dir():
        raise ConfigError(f"CBBQ folder {root} does not exist")
    categories = _option_list(protocol, "categories") or cbbq_files.categories_in(root)
    order = protocol.get("disambiguated_order", "first_mention")
    if order not in ("first_mention", "full"):
        raise ConfigError(f"protocol.disambiguated_order must be first_mention or full, got {order!r}")

    def rows():
        for category in categories:
            for condition in cbbq_files.CONDITION_FOLDERS:
                files = {p.name: p for p in cbbq_files.template_files(root, category, condition)}
                if not files:
                    continue
                neg = [r for _, r in cbbq_files.read_csv(files["templates_generate_neg.csv"], ())] if "templates_generate_neg.csv" in files else []
                nonneg = (
                    [r for _, r in cbbq_files.read_csv(files["templates_generate_nonneg.csv"], ())]
                    if "templates_generate_nonneg.csv" in files
                    else []
                )
                swap = "full" if condition == "ambiguous" else order
                for instance in expand_condition(neg, nonneg, condition, swap):
                    yield {"category": category, "context_condition": condition, **instance}

    return _write_jsonl(rows(), out_path)
