"""Settings when several benchmarks run in one call: protocol.KEY, protocol.BENCHMARK.KEY, data.BENCHMARK.path."""

from __future__ import annotations

import pytest

from culturebias.bootstrap.api import benchmark_names
from culturebias.bootstrap.settings import load_settings
from culturebias.domain.errors import ConfigError, UnknownNameError

ALL = ["kobbq", "cbbq", "libra"]


def test_a_plain_key_goes_to_every_benchmark_that_has_it_and_a_section_wins():
    settings = load_settings(None, ["protocol.limit=5", "protocol.prompts=1", "protocol.libra.limit=7", "protocol.cbbq.w1=0.5"])
    assert settings.for_benchmark("kobbq", ALL).protocol == {"limit": "5", "prompts": "1"}
    assert settings.for_benchmark("cbbq", ALL).protocol == {"limit": "5", "w1": "0.5"}
    assert settings.for_benchmark("libra", ALL).protocol == {"limit": "7"}
    assert settings.protocol_options("libra", ALL).limit == 7


def test_a_key_no_selected_benchmark_has_is_an_error_with_a_suggestion():
    with pytest.raises(UnknownNameError, match="for any of the benchmarks kobbq, cbbq; did you mean 'protocol.categories'"):
        load_settings(None, ["protocol.categorie=gender"]).for_benchmark("cbbq", ["kobbq", "cbbq"])
    # prompts is KoBBQ's alone: without KoBBQ in the call it is an error that says whose it is.
    with pytest.raises(ConfigError, match="protocol.prompts is not a setting of any of the benchmarks cbbq, libra; it belongs to kobbq"):
        load_settings(None, ["protocol.prompts=1"]).for_benchmark("cbbq", ["cbbq", "libra"])


def test_sections_of_benchmarks_not_run_are_ignored_but_their_typos_are_not():
    settings = load_settings(None, ["protocol.twbias.groups=gender", "protocol.kobbq.limit=2"])
    assert settings.for_benchmark("kobbq").protocol == {"limit": "2"}
    with pytest.raises(UnknownNameError, match="did you mean 'protocol.twbias.groups'"):
        load_settings(None, ["protocol.twbias.group=gender"]).for_benchmark("kobbq")


def test_a_bad_value_names_the_benchmark():
    with pytest.raises(ConfigError, match="protocol settings for kobbq: protocol.limit"):
        load_settings(None, ["protocol.limit=0"]).for_benchmark("kobbq", ALL)
    with pytest.raises(ConfigError, match="protocol settings for libra: protocol.alpha"):
        load_settings(None, ["protocol.libra.alpha=2"]).for_benchmark("libra", ALL)


def test_data_per_benchmark():
    settings = load_settings(None, ["data.libra.path=/data/libra", "data.cbbq.path=/data/cbbq"])
    assert settings.for_benchmark("libra", ALL).data.path == "/data/libra"
    assert settings.for_benchmark("kobbq", ALL).data.path is None  # bundled
    assert settings.for_benchmark("libra", ALL).data.model_dump() == {"path": "/data/libra"}  # recorded flat
    with pytest.raises(ConfigError, match="set data.kobbq.path instead"):
        load_settings(None, ["data.path=/data/x"]).for_benchmark("kobbq", ALL)
    assert load_settings(None, ["data.path=/data/x"]).for_benchmark("kobbq").data.path == "/data/x"
    with pytest.raises(UnknownNameError, match="did you mean 'data.path'"):
        load_settings(None, ["data.pth=/data/x"])
    with pytest.raises(UnknownNameError, match="data.libra.folder"):
        load_settings(None, ["data.libra.folder=/data/x"])


def test_a_benchmark_run_with_others_records_what_a_run_alone_would():
    together = load_settings(None, ["protocol.kobbq.limit=3", "protocol.libra.limit=9", "data.libra.path=/l"])
    alone = load_settings(None, ["protocol.limit=3"])
    assert together.for_benchmark("kobbq", ALL).redacted() == alone.for_benchmark("kobbq").redacted()
    assert together.for_benchmark("kobbq", ALL).resume_identity() == alone.for_benchmark("kobbq").resume_identity()


def test_benchmark_names():
    assert benchmark_names("kobbq, cbbq,kobbq,") == ["kobbq", "cbbq"]
    assert benchmark_names(["libra"]) == ["libra"]
    with pytest.raises(UnknownNameError, match="did you mean 'cbbq'"):
        benchmark_names("kobbq,cbbbq")
    with pytest.raises(ConfigError, match="no benchmark named"):
        benchmark_names(" , ")


def test_a_bare_key_one_benchmark_of_a_combined_run_rejects_says_to_set_it_per_benchmark():
    hint = ("a bare protocol.prompt_set reaches every benchmark of this run (mcbe, cbbq): set it for one with "
            "protocol.<benchmark>.prompt_set, e.g. protocol.mcbe.prompt_set")
    with pytest.raises(ConfigError) as raised:
        load_settings(None, ["protocol.prompt_set=table7"]).for_benchmark("cbbq", ["mcbe", "cbbq"])
    assert str(raised.value).startswith("protocol settings for cbbq: protocol.prompt_set") and hint in str(raised.value)
    with pytest.raises(ConfigError) as alone:  # one benchmark: nothing else the key could have been meant for
        load_settings(None, ["protocol.prompt_set=table7"]).for_benchmark("cbbq", ["cbbq"])
    assert "reaches every benchmark" not in str(alone.value)
    with pytest.raises(ConfigError) as scoped:  # set in cbbq's own section: the user meant cbbq
        load_settings(None, ["protocol.cbbq.prompt_set=table7"]).for_benchmark("cbbq", ["mcbe", "cbbq"])
    assert "reaches every benchmark" not in str(scoped.value)
    settings = load_settings(None, ["protocol.mcbe.prompt_set=table7", "protocol.cbbq.prompt_set=released"])
    assert settings.for_benchmark("cbbq", ["mcbe", "cbbq"]).protocol == {"prompt_set": "released"}
