"""model.sampling.*, run.repeats and --preset: typed settings, request keys and presets (domain/sampling.py)."""

from __future__ import annotations

import json
from dataclasses import asdict
from types import SimpleNamespace

import pytest

from culturebias.adapters.hf.sampling import ResolvedSampling, request_seed, resolve_sampling
from culturebias.adapters.openai.generator import _sampling
from culturebias.application.recorded_ports import request_key
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.presets import preset_assignments, presets
from culturebias.bootstrap.settings import load_settings
from culturebias.domain.errors import ConfigError, UnknownNameError
from culturebias.domain.fingerprint import fingerprint
from culturebias.domain.repeats import repeat_stat, repeats_block
from culturebias.domain.requests import GenerationParams, GenerationRequest
from culturebias.domain.sampling import SamplingSettings
from culturebias.testing.context import fake_context


def sampling_of(*assignments: str) -> SamplingSettings:
    return load_settings(None, list(assignments)).model.backend_options().sampling


# --------------------------------------------------------------------------- settings


def test_greedy_is_the_default_and_a_temperature_alone_means_sampling():
    assert sampling_of() == SamplingSettings() and SamplingSettings().greedy
    chosen = sampling_of("model.sampling.temperature=0.7", "model.sampling.top_k=20")
    assert (chosen.strategy, chosen.temperature, chosen.top_k, chosen.top_p) == ("sample", 0.7, 20, None)
    assert sampling_of("model.sampling.temperature=0").greedy


@pytest.mark.parametrize(
    "assignment, key",
    [
        ("model.sampling.temperature=-0.5", "model.sampling.temperature"),
        ("model.sampling.temperature=warm", "model.sampling.temperature"),
        ("model.sampling.top_p=1.5", "model.sampling.top_p"),
        ("model.sampling.top_k=-1", "model.sampling.top_k"),
        ("model.sampling.repetition_penalty=0", "model.sampling.repetition_penalty"),
        ("model.sampling.strategy=beam", "model.sampling.strategy"),
    ],
)
def test_a_bad_value_is_a_config_error_naming_the_key(assignment, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_settings(None, [assignment])


def test_contradictory_and_unknown_sampling_keys_are_named():
    with pytest.raises(ConfigError, match=r"model\.sampling: .*top_p applies to sampling, and strategy is greedy"):
        load_settings(None, ["model.sampling.strategy=greedy", "model.sampling.top_p=0.9"])
    with pytest.raises(ConfigError, match=r"model\.sampling: .*temperature=0 is greedy decoding"):
        load_settings(None, ["model.sampling.strategy=sample", "model.sampling.temperature=0"])
    with pytest.raises(ConfigError, match=r"did you mean 'model\.sampling\.temperature'"):
        load_settings(None, ["model.sampling.temprature=0.7"])
    with pytest.raises(ConfigError, match=r"run\.repeats"):
        load_settings(None, ["run.repeats=0"])


def test_cli_exits_2_on_a_bad_temperature(tmp_path, capsys):
    code = main(["run", "mcbe", "--out", str(tmp_path / "o"), "--set", "model.sampling.temperature=-1"])
    assert code == 2 and "model.sampling.temperature" in capsys.readouterr().err


def test_sampling_and_repeats_enter_the_run_identity_only_where_set():
    plain = load_settings(None, [])
    identity = plain.resume_identity()
    assert "sampling" not in identity["model"] and identity["run"] == {"seed": 0, "chunk_size": 2048}
    sampled = load_settings(None, ["model.sampling.temperature=0.7", "run.repeats=4"]).resume_identity()
    assert sampled["model"]["sampling"]["temperature"] == 0.7 and sampled["run"]["repeats"] == 4
    assert plain.redacted()["model"]["sampling"]["strategy"] == "greedy"  # the config records it always


# --------------------------------------------------------------------------- request parameters and keys


def test_greedy_parameters_and_keys_are_those_of_runs_made_before_sampling_existed():
    ctx = fake_context(seed=5)
    params = ctx.generation_params(32, stop=("\n",))
    assert params == GenerationParams(max_new_tokens=32, stop=("\n",)) and params.seed == 0
    request = GenerationRequest(prompt="問題：", params=params)
    old_payload = asdict(request)
    for name in ("top_k", "repetition_penalty", "strategy"):
        del old_payload["params"][name]
    assert request_key("m", request) == fingerprint(["m", "GenerationRequest", old_payload], length=32)


def test_sampled_keys_differ_by_seed_and_greedy_keys_do_not():
    sampled = SamplingSettings(temperature=0.7)
    keys = {
        request_key("m", GenerationRequest(prompt="p", params=fake_context(sampling=sampled, seed=s).generation_params(8)))
        for s in (0, 1)
    }
    assert len(keys) == 2
    repeats = [fake_context(sampling=sampled, seed=3) for _ in range(2)]
    repeats[1].repeat = 1
    assert repeats[0].generation_params(8).seed == 3 and repeats[1].generation_params(8).seed == 4
    greedy = {request_key("m", GenerationRequest(prompt="p", params=fake_context(seed=s).generation_params(8))) for s in (0, 1, 7)}
    assert len(greedy) == 1
    assert GenerationParams(seed=9).seed == 0  # a greedy request's seed is 0 however it was made


def test_decoding_overrides_for_one_generation():
    ctx = fake_context(sampling=SamplingSettings(temperature=0.7, seed=11))
    assert ctx.generation_params(8, decoding="greedy").mode == "greedy"
    assert fake_context().generation_params(8, decoding="sampled").mode == "sample"
    run = ctx.generation_params(8, decoding="sampled")
    assert (run.mode, run.temperature, run.seed) == ("sample", 0.7, 11)
    own = fake_context(sampling=SamplingSettings(strategy="model", top_k=5)).generation_params(8, decoding="sampled")
    assert (own.mode, own.top_k, own.temperature) == ("sample", 5, None)  # sampled even where the model's default is greedy


def test_hf_resolves_unset_values_from_the_generation_config():
    config = SimpleNamespace(do_sample=True, temperature=0.6, top_p=0.8, top_k=20, repetition_penalty=1.05)
    model = GenerationParams(temperature=None, top_p=None, strategy="model", seed=1)
    assert resolve_sampling(model, config) == ResolvedSampling(0.6, 0.8, 20, 1.05)
    override = GenerationParams(temperature=1.2, top_p=None, strategy="model", seed=1)
    assert resolve_sampling(override, config) == ResolvedSampling(1.2, 0.8, 20, 1.05)
    greedy_model = SimpleNamespace(do_sample=False, temperature=None, top_p=None, top_k=None, repetition_penalty=None)
    assert resolve_sampling(model, greedy_model) is None  # the model's own decoding is greedy
    sample = GenerationParams(temperature=0.9, top_p=None, strategy="sample", seed=1)
    assert resolve_sampling(sample, greedy_model) == ResolvedSampling(0.9, 1.0, 50, 1.0)  # transformers' defaults
    assert resolve_sampling(GenerationParams(), config) is None


def test_a_request_seed_depends_on_the_seed_and_the_prompt_only():
    params = GenerationParams(temperature=0.7, seed=3)
    assert request_seed(3, [1, 2, 3], params) == request_seed(3, [1, 2, 3], params)
    assert len({request_seed(3, [1, 2, 3], params), request_seed(4, [1, 2, 3], params), request_seed(3, [1, 2], params)}) == 3


def test_openai_bodies_leave_unset_values_to_the_server():
    assert _sampling(GenerationParams(max_new_tokens=5)) == {"max_tokens": 5, "temperature": 0.0, "top_p": 1.0, "seed": 0}
    body = _sampling(SamplingSettings(strategy="model", top_k=40).params(5, seed=7))
    assert body == {"max_tokens": 5, "top_k": 40, "seed": 7}
    body = _sampling(SamplingSettings(temperature=0.7, repetition_penalty=1.1).params(5, seed=2))
    assert body == {"max_tokens": 5, "temperature": 0.7, "repetition_penalty": 1.1, "seed": 2}


# --------------------------------------------------------------------------- repeats statistics


def test_mean_and_sample_std_over_the_repeats_where_a_metric_is_defined():
    stat = repeat_stat([60.0, 70.0, 80.0, 90.0])
    assert (stat.mean, stat.std, stat.n) == (75.0, pytest.approx(12.909944), 4)
    assert repeat_stat([0.5, 0.5, 0.5, 0.5]).std == 0.0
    assert (repeat_stat([1.0, None, float("nan")]).n, repeat_stat([1.0, None]).std) == (1, None)
    assert repeat_stat([None]).mean is None
    block = repeats_block("greedy", [0, 1], [{"overall": 40.0}, {"overall": 40.0, "extra": 1.0}])
    assert block.headline["extra"].n == 1 and block.runs[1].index == 1
    assert json.loads(block.model_dump_json())["headline"]["overall"] == {"mean": 40.0, "std": 0.0, "n": 2}


# --------------------------------------------------------------------------- presets


def test_presets_resolve_to_valid_settings():
    mcbe = load_settings(None, preset_assignments(["mcbe-paper"], ["mcbe"]))
    assert mcbe.model.backend_options().sampling.strategy == "model" and mcbe.run.repeats == 4
    cbbq = load_settings(None, preset_assignments(["cbbq-cot-sampled"], ["cbbq"]))
    options = cbbq.protocol_options("cbbq")
    assert options.condition == ["q_if_cot"] and options.reasoning_decoding == "sampled"
    for preset in presets().values():
        load_settings(None, preset.assignments()).for_benchmark(preset.benchmarks[0])


def test_set_wins_over_a_preset_and_a_preset_is_for_its_benchmarks():
    settings = load_settings(None, [*preset_assignments(["mcbe-paper"], ["mcbe"]), "run.repeats=2"])
    assert settings.run.repeats == 2
    with pytest.raises(ConfigError, match="preset mcbe-paper is for mcbe; this run is of kobbq"):
        preset_assignments(["mcbe-paper"], ["kobbq"])
    with pytest.raises(UnknownNameError, match="did you mean 'cbbq-cot-sampled'"):
        preset_assignments(["cbbq-cot-sample"], ["cbbq"])


def test_presets_are_listed(capsys):
    assert main(["list", "--format", "json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)["presets"]}
    assert listed["mcbe-paper"]["assignments"] == ["model.sampling.strategy=model", "run.repeats=4"]
    assert main(["run", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "cbbq-cot-sampled" in help_text and "model.sampling.temperature" in help_text
