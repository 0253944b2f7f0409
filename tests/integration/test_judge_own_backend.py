"""A judge on its own backend (issue 27 point 1): a local hf model judged by a model on an OpenAI-compatible server.

The docs' McBE example (docs/benchmarks/mcbe.md) is extracted and run with its own keys; only the values that
point outside this machine (the served judge's address, the evaluated model, the data)
are replaced by local ones.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.bootstrap.settings import load_settings  # noqa: E402
from culturebias.domain.errors import UnknownNameError  # noqa: E402
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer  # noqa: E402
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402

MCBE_PAGE = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "mcbe.md"
QUICK = [
    "--set", "protocol.limit=1", "--set", "protocol.tasks=ba",
    "--set", "protocol.ba_max_new_tokens=4", "--set", "protocol.judge_probe=0",
    "--set", "model.device=cpu", "--set", "run.progress=false",
]


def readme_judge_example() -> list[str]:
    """The docs' McBE command that puts the judge on a served backend, as argv."""
    section = MCBE_PAGE.read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [c for c in block.replace("\\\n", " ").splitlines() if c.startswith("culturebias run mcbe")]
    [command] = [c for c in commands if "judge.backend=openai" in c]
    return shlex.split(command.split("#")[0])[1:]


def _settings_of(argv: list[str]) -> dict[str, str]:
    return dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "--set")


def _localised(argv: list[str], **values: str) -> list[str]:
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--set" and out[i + 1].split("=", 1)[0] in values:
            out[i + 1] = f"{out[i + 1].split('=', 1)[0]}={values[out[i + 1].split('=', 1)[0]]}"
    return out


@pytest.fixture
def judge_server():
    judge = ScriptedGenerator(lambda request, prompt: "5", name="glm-4-air")
    with OpenAITestServer("glm-4-air", CharacterTokenSource(ScriptedScorer(lambda c, x: -1.0)), judge) as server:
        yield server


def test_the_readme_example_runs_against_a_local_judge_server(tmp_path, judge_server, monkeypatch):
    argv = readme_judge_example()
    given = _settings_of(argv)
    assert {"judge.backend", "judge.path", "judge.api_base", "judge.api_key_env"} <= set(given)
    assert not any(k.startswith("model.api") for k in given), "the evaluated model is local: no model.api_* key"
    monkeypatch.setenv(given["judge.api_key_env"], "sk-judge-test")
    argv = _localised(
        argv,
        **{"judge.api_base": judge_server.api_base, "model.path": str(cached_tiny_causal_lm(arch="llama"))},
        **{"data.path": str(Path(__file__).resolve().parents[2] / "adapters" / "bundled" / "mcbe")},
    )
    argv[argv.index("--out") + 1] = str(tmp_path / "out")
    assert main([*argv, *QUICK, "--set", f"run.cache_dir={tmp_path / 'cache'}"]) == 0

    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["model"]["judge"]["backend"] == "openai" and summary["model"]["judge"]["model"] == "glm-4-air"
    assert summary["model"]["generator"]["backend"] == "hf"
    assert summary["metrics"]["judge"]["is_evaluated_model"] is False
    served = judge_server.requests()
    assert served and {s.endpoint for s in served} == {"chat/completions"}, "the judge only generates"
    assert all(s.authorization == "Bearer sk-judge-test" for s in served), "the judge's own key, from judge.api_key_env"
    assert not [s for s in judge_server.requests(probe=True) if s.probe], "no truth probe for a judge that only generates"
    # every BA verdict came from the served judge: 4 criteria per BEI, each scored 5
    assert summary["counts"]["ba_judge_requests"] == len(served)


def test_judge_options_are_the_judge_backends_own(monkeypatch):
    monkeypatch.setenv("CULTUREBIAS_JUDGE__TIMEOUT_S", "7")
    settings = load_settings(None, [
        "model.batch_size=4", "judge.backend=openai", "judge.path=glm", "judge.api_base=http://127.0.0.1:9/v1",
        "judge.max_concurrency=3", "judge.chat_template=none", "judge.api_key_file=/run/key", "judge.sampling.temperature=0.5",
    ])
    judge = settings.judge_options()
    assert (judge.backend, judge.api_base, judge.max_concurrency, judge.chat_template) == ("openai", "http://127.0.0.1:9/v1", 3, "none")
    assert judge.timeout_s == 7 and judge.api_key_file == "/run/key" and judge.sampling.temperature == 0.5
    assert judge.batch_size == 16, "a judge on another backend does not inherit model.*"
    assert settings.model.backend_options().backend == "hf"


def test_a_judge_key_in_toml_and_a_secret_never_printed(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('[judge]\nbackend = "openai"\npath = "glm"\napi_base = "http://h/v1"\napi_key = "sk-secret"\n', encoding="utf-8")
    settings = load_settings(config)
    assert settings.judge_options().api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in json.dumps(settings.redacted()) and "sk-secret" not in repr(settings)


def test_a_judge_setting_its_backend_does_not_have_names_the_backends_keys():
    with pytest.raises(UnknownNameError) as error:
        load_settings(None, ["judge.path=/j", "judge.api_base=http://h/v1"])
    message = str(error.value)
    assert "judge.api_base" in message and "'hf'" in message and "judge.device" in message and "set judge.backend=openai" in message
    with pytest.raises(UnknownNameError, match="judge.prefix_cache"):
        load_settings(None, ["judge.backend=openai", "judge.path=g", "judge.prefix_cache=false"])


def test_the_api_takes_the_judge_section():
    from culturebias.bootstrap.api import make_settings

    settings = make_settings(judge={"backend": "openai", "path": "glm", "api_base": "http://h/v1", "max_concurrency": 2})
    assert settings.judge_options().max_concurrency == 2


def test_the_judge_decodes_as_judge_sampling_says_and_greedily_by_default():
    from culturebias.bootstrap.container import build_judge

    generator = ScriptedGenerator(lambda request, prompt: "1")
    greedy = build_judge(load_settings(None, ["judge.backend=openai", "judge.path=g", "judge.api_base=http://h/v1"]), generator)
    assert greedy._params.temperature == 0.0
    sampled = build_judge(
        load_settings(None, ["judge.backend=openai", "judge.path=g", "judge.api_base=http://h/v1", "judge.sampling.temperature=0.5"]),
        generator,
    )
    assert sampled._params.temperature == 0.5 and sampled._params.strategy == "sample"
    # a judge on the model's backend inherits its settings, but not the evaluated model's sampling
    inherited = build_judge(load_settings(None, ["model.sampling.temperature=0.7", "judge.path=/j"]), generator)
    assert inherited._params.temperature == 0.0


def test_libras_judge_is_a_served_model_of_its_own(tmp_path, judge_server, monkeypatch):
    import culturebias

    monkeypatch.setenv("LIBRA_JUDGE_KEY", "sk-libra")
    judge = {"backend": "openai", "path": "glm-4-air", "api_base": judge_server.api_base, "api_key_env": "LIBRA_JUDGE_KEY"}
    options = {"limit": 2, "knowledge_boundary": "on", "comparison": "judge", "definition_max_tokens": 4}
    model = {"path": str(cached_tiny_causal_lm(arch="llama")), "device": "cpu"}
    result = culturebias.evaluate("libra", model=model, options=options, judge=judge, run={"progress": "never", "cache_dir": str(tmp_path)})
    served = judge_server.requests()
    assert served and all(s.authorization == "Bearer sk-libra" and s.endpoint == "chat/completions" for s in served)
    assert result.model.judge.model == "glm-4-air"
