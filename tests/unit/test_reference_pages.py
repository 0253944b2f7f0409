"""The docs site's generated tables: every setting key described once, in the models; markers resolved."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from culturebias.adapters.docs.setting_keys import field_comment, model_keys
from culturebias.bootstrap.reference_pages import configuration_reference, headline_table, render
from culturebias.bootstrap.registry import registry
from culturebias.bootstrap.settings_reference import setting_keys


class Documented(BaseModel):
    # the first line of a comment above
    # and its second line
    above: int = 1
    beside: str = "x"  # a comment on its line
    declared: int = Field(2, description="its own description")  # a comment that loses to it
    bare: int = 3


class Child(Documented):
    extra: bool = False  # the child's own


def test_a_key_s_description_is_its_field_s_else_the_comments_beside_it():
    assert field_comment(Documented, "above") == "the first line of a comment above and its second line"
    assert field_comment(Documented, "beside") == "a comment on its line"
    assert field_comment(Documented, "bare") == ""
    assert field_comment(Child, "beside") == "a comment on its line"  # found in the class that declares it
    assert field_comment(Child, "extra") == "the child's own"

    described = {key.key: key.description for key in model_keys("x", Documented)}
    assert described["x.declared"] == "its own description"


def test_every_setting_key_is_described():
    undescribed = [f"{key.owner or 'common'}: {key.key}" for key in setting_keys() if not key.description.strip()]
    assert undescribed == [], "add Field(description=...) or a comment beside the field"


def test_the_configuration_reference_lists_every_key_with_its_default():
    page = configuration_reference()
    for key in setting_keys():
        assert f"`{key.key}`" in page
    assert "| `run.bootstrap_resamples` | `int` | `2000` |" in page
    assert "`ray.replicas`" in page and "### backend `openai`" in page and "### benchmark `kobbq`" in page


def test_a_literal_type_does_not_split_its_table_row():
    row = next(line for line in configuration_reference().splitlines() if line.startswith("| `run.progress` |"))
    assert row.count(" | ") == 3 and "`auto` or `always` or `never`" in row


@pytest.mark.parametrize("benchmark", ["twbias", "kobbq", "cbbq", "mcbe", "libra"])
def test_each_benchmark_page_shows_its_declared_headlines(benchmark):
    table = headline_table(benchmark)
    for headline in registry().benchmark(benchmark).headline_metrics():
        assert f"| `{headline.name}` |" in table


def test_an_unknown_marker_is_an_error_not_an_empty_table():
    with pytest.raises(KeyError, match="no_such_table"):
        render("<!-- generated:no_such_table -->")
    assert "<!--" not in render("before <!-- generated:stores --> after")
