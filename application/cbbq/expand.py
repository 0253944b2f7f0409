"""``culturebias expand cbbq --out FILE``: CBBQ's question templates to instances, one JSON object per line.

``data.path`` names the CBBQ folder, ``{category}/{ambiguous,disambiguous}/templates_generate_{neg,nonneg}.csv``
(the bundled categories when unset); the instances have the format of
``ambiguous.csv``/``disambiguous.csv``, plus ``category`` and ``context_condition``.
``--set protocol.categories=a,b`` narrows; ``--set protocol.disambiguated_order=first_mention|full``
chooses how the second order of mention is written in disambiguated contexts.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from culturebias.domain.cbbq.templates import SwapRule, expand_condition
from culturebias.domain.errors import ConfigError
from culturebias.domain.option_types import option_list
from culturebias.ports.template_files import CBBQTemplateFiles, RowsWriter

# The ``--set protocol.<key>`` keys ``expand cbbq`` reads (listed by ``culturebias expand --help``).
EXPAND_KEYS = {
    "categories": "categories to expand, e.g. gender,region (default every category of the folder)",
    "disambiguated_order": "first_mention (the default) or full: how the second order of mention is written in "
    "disambiguated contexts",
}


def expand_cbbq(protocol: Mapping[str, Any], templates: CBBQTemplateFiles, write: RowsWriter) -> int:  # Any: TOML/JSON values
    """Expand the templates of ``protocol``'s categories (all by default) into ``write``; returns the instances written."""
    categories = option_list(protocol, "categories") or templates.categories()
    order = protocol.get("disambiguated_order", "first_mention")
    if order not in ("first_mention", "full"):
        raise ConfigError(f"protocol.disambiguated_order must be first_mention or full, got {order!r}")

    def rows() -> Iterator[dict[str, Any]]:  # Any: TOML/JSON values
        for category in categories:
            for condition in templates.conditions:
                found = templates.rows(category, condition)
                if found is None:
                    continue
                negative, non_negative = found
                swap: SwapRule = "full" if condition == "ambiguous" or order == "full" else "first_mention"
                for instance in expand_condition(negative, non_negative, condition, swap):
                    yield {"category": category, "context_condition": condition, **instance}

    return write(rows())
