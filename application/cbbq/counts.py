"""CBBQ's per-category instances against the paper's Table 4, without a model (``culturebias cbbq counts``)."""

from __future__ import annotations

from culturebias.domain.bbq.model import BBQDataset
from culturebias.domain.cbbq.table4 import Table4Row, table4_rows
from culturebias.domain.errors import DataError
from culturebias.ports.datasets import DatasetSource


def data_counts(source: DatasetSource[BBQDataset]) -> list[Table4Row]:
    """Every category of the data source's files, counted as loaded, beside Table 4's count."""
    dataset = source.load()
    found = dataset.facts.get("instances_by_category")
    if not isinstance(found, dict):
        raise DataError("the CBBQ loader did not count instances per category", file=source.describe())
    return table4_rows({str(k): int(v) for k, v in found.items()})
