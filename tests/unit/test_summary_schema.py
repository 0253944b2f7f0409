"""Blocks with a custom serializer keep their fields in the JSON Schema.

Their serializers have no return annotation on purpose (domain/summary.py): pydantic
would take an annotated return type as the block's serialization schema.
"""

import pytest

from culturebias.domain.libra.summary import LibraCounts
from culturebias.domain.mcbe.summary import CategoryScores, PerTask
from culturebias.domain.summary import ModelBlock, Number
from culturebias.domain.twbias.summary import TWBiasMetrics


@pytest.mark.parametrize("block", [ModelBlock, TWBiasMetrics, LibraCounts, CategoryScores, PerTask[Number]])
def test_serialization_schema_lists_the_block_fields(block):
    schema = block.model_json_schema(mode="serialization")
    assert schema.get("type") == "object"
    assert set(block.model_fields) <= set(schema["properties"])
