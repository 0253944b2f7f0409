"""Per-item parity: the same tiny float32 model through ``hf`` and ``onnx`` gives the same numbers.

Log-likelihoods agree to 1e-4 relative, token counts and greediness exactly;
pseudo-log-likelihoods likewise; generated text is identical, greedy and seeded
sampling alike (both run transformers' generation procedure).
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend as hf_backend  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm, cached_tiny_masked_lm  # noqa: E402
from culturebias.testing.tolerance import assert_model_close  # noqa: E402
from culturebias.adapters.onnx.backend import create_backend as onnx_backend  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.adapters.onnx.options import OnnxOptions  # noqa: E402
from culturebias.domain.requests import (  # noqa: E402
    ChatMessage,
    GenerationParams,
    GenerationRequest,
    LoglikelihoodRequest,
    PseudoLoglikelihoodRequest,
)

CACHE = Path(tempfile.mkdtemp(prefix="culturebias-parity-"))

SENTENCES = [
    "男生收入高才會有話語權",
    "女生收入高才會有話語權",
    "男人就是應該負責賺錢養家，不然要被笑。",
    "我覺得老婆比較會修電腦",
    "客家人都很節儉嗎？",
    "그 사람은 의사입니다.",
    "The nurse said she would help.",
]
USER_PROMPTS = ["", "你想說什麼？", "說點什麼吧！"]


@functools.lru_cache(maxsize=None)
def backends(arch: str, batch_size: int = 4):
    path = str(cached_tiny_causal_lm(arch=arch))
    common = {"path": path, "device": "cpu", "batch_size": batch_size}
    return (
        hf_backend(HFOptions(backend="hf", **common), CACHE),
        onnx_backend(OnnxOptions(backend="onnx", **common), CACHE),
    )


def scorers(arch: str, **options):
    """Both scorers over the models loaded once per architecture, with ``options`` as model options."""
    from culturebias.adapters.hf.scorer import HFScorer
    from culturebias.adapters.onnx.backend import OnnxScorer

    hf, onnx = backends(arch)
    return HFScorer(hf.loaded(), hf.options.model_copy(update=options)), OnnxScorer(onnx.causal(), onnx.options.model_copy(update=options))


def requests_for(templater) -> list[LoglikelihoodRequest]:
    contexts = [templater.render([ChatMessage("user", p)]) for p in USER_PROMPTS] + ["", "問題：", "hello "]
    return [LoglikelihoodRequest(c, s) for c in contexts for s in SENTENCES] + [LoglikelihoodRequest("hello", "")]


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@pytest.mark.parametrize(
    "options",
    [
        {"batch_size": 16},
        {"batch_size": 3, "prefix_cache": False},
        {"batch_size": 5, "boundary_rule": "authors"},
    ],
    ids=["prefix-reuse", "no-prefix", "authors-rule"],
)
def test_loglikelihoods_agree_per_item(arch, options):
    hf, onnx = backends(arch)
    requests = requests_for(hf.templater())
    assert onnx.templater().render([ChatMessage("user", "x")]) == hf.templater().render([ChatMessage("user", "x")])
    hf_scorer, onnx_scorer = scorers(arch, **options)
    assert onnx_scorer.provenance.backend == "onnx"
    expected = hf_scorer.loglikelihood(requests)
    got = onnx_scorer.loglikelihood(requests)
    for request, want, have in zip(requests, expected, got):
        assert have.n_tokens == want.n_tokens, request
        assert have.is_greedy == want.is_greedy, request
        assert_model_close(have.logprob, want.logprob, what=str(request))  # two runtimes' float32 kernels


def test_pseudo_loglikelihoods_agree_per_item():
    path = str(cached_tiny_masked_lm())
    common = {"path": path, "device": "cpu", "kind": "masked", "batch_size": 3}
    hf = hf_backend(HFOptions(backend="hf", **common), CACHE).pseudo_scorer()
    onnx = onnx_backend(OnnxOptions(backend="onnx", **common), CACHE).pseudo_scorer()
    texts = ["Kiwis love rugby, and Aucklanders complain about traffic.", "她是一名医生，他是一名护士。", "The doctor said"]
    requests = [PseudoLoglikelihoodRequest(t, s, e) for t in texts for s, e in ((0, len(t)), (2, 9))]
    for request, want, have in zip(requests, hf.pseudo_loglikelihood(requests), onnx.pseudo_loglikelihood(requests)):
        assert have.n_tokens == want.n_tokens, request
        assert_model_close(have.logprob, want.logprob, what=str(request))


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_generation_is_identical(arch):
    hf, onnx = backends(arch)
    greedy = GenerationParams(max_new_tokens=12)
    sampled = GenerationParams(max_new_tokens=10, temperature=0.8, top_p=0.9, seed=5)
    requests = [
        GenerationRequest(prompt="The doctor said", params=greedy),
        GenerationRequest.chat([ChatMessage("user", "你想說什麼？")], greedy),
        GenerationRequest(prompt="男生收入", params=GenerationParams(max_new_tokens=8, stop=("。", "男"))),
        GenerationRequest(prompt="The answer is", params=sampled),
        GenerationRequest(prompt="男生", params=sampled),
    ]
    expected = [r.text for r in hf.generator().generate(requests)]
    got = [r.text for r in onnx.generator().generate(requests)]
    assert got == expected
    assert all(len(text) > 0 for text in expected[:2])


# --------------------------------------------------------------------------- headline metrics, end to end

from culturebias.bootstrap.cli import main  # noqa: E402

ALPHA_MARGIN = 1e-3
METRIC_RELATIVE = 1e-3
# TWBias keys that follow from "p < α" and may flip only where a p-value lies within ALPHA_MARGIN of α.
SIGNIFICANCE_KEYS = {"bias_ratio", "effect_size", "n_significant", "significant_prompts", "significant"}

PROTOCOL_RUNS = {
    "twbias": ["--set", "protocol.groups=gender", "--set", "protocol.prompt_types=0,00,1,2", "--set", "protocol.limit=5"],
    "kobbq": ["--set", "protocol.limit=3", "--set", "protocol.prompts=1,2", "--set", "protocol.statistics=false"],
    "mcbe": [
        "--set", "protocol.limit=1", "--set", "protocol.categories=gender,region",
        "--set", "protocol.ba_max_new_tokens=12", "--set", "protocol.sc_max_new_tokens=8",
        "--set", "protocol.ss_max_new_tokens=6", "--set", "protocol.bs_max_new_tokens=6",
    ],
    "libra": ["--set", "protocol.definition_max_tokens=8"],
}  # fmt: skip


@pytest.fixture
def _restore_logging():
    yield
    import structlog

    structlog.reset_defaults()


def leaves(value, path=()):
    if isinstance(value, dict):
        for key, child in value.items():
            yield from leaves(child, (*path, str(key)))
    elif isinstance(value, list) and not all(isinstance(v, str) for v in value):
        for i, child in enumerate(value):
            yield from leaves(child, (*path, str(i)))
    else:
        yield path, value


def near_alpha_blocks(metrics: dict, alpha: float) -> set[tuple[str, ...]]:
    """Paths of TWBias specification blocks with a p-value within ALPHA_MARGIN of α."""
    blocks = set()
    for path, value in leaves(metrics):
        if path[-1] == "p_value" and isinstance(value, float) and abs(value - alpha) <= ALPHA_MARGIN:
            blocks.add(path[: path.index("prompts")] if "prompts" in path else path[:-1])
    return blocks


def differences(hf: dict, onnx: dict, alpha: float | None) -> list[str]:
    a, b = dict(leaves(hf)), dict(leaves(onnx))
    assert a.keys() == b.keys()
    exempt = near_alpha_blocks(hf, alpha) | near_alpha_blocks(onnx, alpha) if alpha is not None else set()
    found = []
    for path, x in a.items():
        y = b[path]
        if path[-1] == "backend":
            continue  # the judge's identity names its backend
        if "intervals" in path and path[-1] == "note":
            continue  # how many of 2000 resamples of near-constant data were undefined: rounding, not the backend
        if isinstance(x, float) and isinstance(y, float):
            same = y == pytest.approx(x, rel=METRIC_RELATIVE, abs=1e-9)
        else:
            same = x == y
        if same:
            continue
        if SIGNIFICANCE_KEYS & set(path) and any(path[: len(block)] == block for block in exempt):
            continue
        found.append(f"{'.'.join(path)}: hf {x!r} vs onnx {y!r}")
    return found


@pytest.mark.parametrize("protocol", sorted(PROTOCOL_RUNS))
def test_headline_metrics_agree_between_hf_and_onnx(protocol, tmp_path, request, _restore_logging):
    extra = list(PROTOCOL_RUNS[protocol])
    if protocol == "twbias":  # its data may not be bundled: skipped with the reason where absent
        extra += ["--set", f"data.path={request.getfixturevalue('twbias_data')}"]
    model = str(cached_tiny_causal_lm(arch="llama"))
    summaries = {}
    for backend in ("hf", "onnx"):
        out = tmp_path / backend
        argv = [
            "run", protocol, "--out", str(out),
            "--set", f"model.backend={backend}", "--set", f"model.path={model}", "--set", "model.device=cpu",
            "--set", "run.progress=false", "--set", "run.report=none", "--set", f"run.cache_dir={CACHE}",
            *extra,
        ]  # fmt: skip
        assert main(argv) == 0
        summaries[backend] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    hf, onnx = summaries["hf"], summaries["onnx"]
    for backend, summary in summaries.items():  # the runs really used the backend they were given
        assert {v for path, v in leaves(summary["model"]) if path[-1] == "backend"} == {backend}
    alpha = hf["metrics"].get("analysis", {}).get("alpha") if protocol == "twbias" else None
    assert differences(hf["metrics"], onnx["metrics"], alpha) == []
    assert differences(hf["counts"], onnx["counts"], None) == []


def test_the_comparison_excuses_a_flipped_bias_ratio_only_next_to_alpha():
    def spec(p_value, ratio):
        return {"gender": {"male": {"bias_ratio": ratio, "prompts": {"1": {"p_value": p_value}}}}}

    assert differences(spec(0.04999, 1.0), spec(0.05001, 0.0), alpha=0.05) == []
    assert differences(spec(0.0300, 1.0), spec(0.0300, 0.0), alpha=0.05) == ["gender.male.bias_ratio: hf 1.0 vs onnx 0.0"]
    assert differences({"x": 1.0}, {"x": 1.0005}, None) == []
    assert differences({"x": 1.0}, {"x": 1.002}, None) == ["x: hf 1.0 vs onnx 1.002"]
