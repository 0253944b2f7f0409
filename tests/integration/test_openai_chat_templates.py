"""Chat templates on served models (issue #12 point 4) against a loopback server serving a tiny transformers model.

One rule (adapters/openai/templating.py): chat messages are generated through /v1/chat/completions;
scored templated text is rendered here from ``model.tokenizer``, else by the server's template endpoint
(llama.cpp /apply-template, vLLM /tokenize + /detokenize), else refused in preflight. The rendered text
must score exactly as the hf backend scores its own rendering: one BOS, never two.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend as hf_backend  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.adapters.openai.backend import create_backend as openai_backend  # noqa: E402
from culturebias.adapters.openai.options import OpenAIOptions  # noqa: E402
from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.domain.errors import CapabilityError, ConfigError  # noqa: E402
from culturebias.domain.requests import ChatMessage, LoglikelihoodRequest  # noqa: E402
from culturebias.testing.kobbq_runs import bundled_kobbq  # noqa: E402
from culturebias.testing.openai_server import HFTokenSource, OpenAITestServer  # noqa: E402
from culturebias.testing.context import run_with_fakes  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402

RELATIVE = 1e-4
HF_CACHE = Path(tempfile.mkdtemp(prefix="culturebias-openai-templates-"))
CONVERSATIONS = [
    [ChatMessage("user", "你想說什麼？")],
    [ChatMessage("user", "다음 문장을 읽고 질문에 답하세요."), ChatMessage("assistant", "네"), ChatMessage("user", "정답은?")],
    [ChatMessage("user", "")],
]
REPLIES = ["男生收入高才會有話語權", "A", "The nurse said she would help."]


@functools.lru_cache(maxsize=None)
def hf(arch: str):
    return hf_backend(HFOptions(backend="hf", path=str(cached_tiny_causal_lm(arch=arch)), device="cpu", batch_size=8), HF_CACHE)


@functools.lru_cache(maxsize=None)
def token_source(arch: str) -> HFTokenSource:
    return HFTokenSource(str(cached_tiny_causal_lm(arch=arch)))


@pytest.fixture
def serve(tmp_path):
    running = []

    def start(arch: str, template_route: str = "apply-template", tokenize_routes: bool = True, **overrides):
        server = OpenAITestServer(f"tiny-{arch}", token_source(arch), hf(arch).generator()).start()
        server.state.template_route = template_route
        server.state.tokenize_routes = tokenize_routes
        running.append(server)
        options = {"backend": "openai", "api_base": server.api_base, "path": f"tiny-{arch}", "max_concurrency": 2, **overrides}
        return server, openai_backend(OpenAIOptions(**options), tmp_path / "cache")

    yield start
    for server in running:
        server.stop()


def scored_in_template(backend, arch: str) -> list:
    """Each reply scored after its conversation's rendered prompt, as TWBias types 1-10 and BBQ likelihood do."""
    templater = backend.templater()
    templater.check_render()
    requests = [LoglikelihoodRequest(templater.render(c, add_generation_prompt=True), r) for c in CONVERSATIONS for r in REPLIES]
    return backend.scorer().loglikelihood(requests)


# llama: the tokenizer adds BOS, as the server does to every prompt; gpt2: neither adds one (the template still writes <s>)
RENDERERS = [
    ("llama", "apply-template", True, {"tokenizer": "TINY"}),  # rendered here from model.tokenizer
    ("gpt2", "none", False, {"tokenizer": "TINY"}),  # model.tokenizer on a server without any tokenize route
    ("llama", "none", False, {"tokenizer": "TINY"}),
    ("llama", "apply-template", True, {}),  # llama.cpp's /apply-template
    ("gpt2", "apply-template", True, {}),
    ("llama", "tokenize", True, {}),  # vLLM's /tokenize with messages + /detokenize
    ("gpt2", "tokenize", True, {}),
]


@pytest.mark.parametrize("arch, route, tokenize_routes, overrides", RENDERERS)
def test_templated_text_scores_as_the_hf_backend_scores_its_own_rendering(serve, arch, route, tokenize_routes, overrides):
    overrides = {k: (str(cached_tiny_causal_lm(arch=arch)) if v == "TINY" else v) for k, v in overrides.items()}
    server, backend = serve(arch, template_route=route, tokenize_routes=tokenize_routes, **overrides)
    got = scored_in_template(backend, arch)
    want = scored_in_template(hf(arch), arch)
    for have, expected in zip(got, want, strict=True):
        assert have.n_tokens == expected.n_tokens
        assert have.logprob == pytest.approx(expected.logprob, rel=RELATIVE)
    # one BOS, never two: the server's own is the only one where it adds one (llama), the template's where not (gpt2)
    sent = [s.body["prompt"] for s in server.requests("completions")]
    assert sent and all(p.startswith("<s>") == (arch == "gpt2") for p in sent)
    use = backend.templater().template_use
    assert use.messages == "applied by the server (not visible here)"
    if overrides:
        assert use.rendered_text == "rendered here" and use.source == f"model.tokenizer={overrides['tokenizer']}"
    else:
        assert use.rendered_text == "rendered by the server's template endpoint"
        assert ("/apply-template" if route == "apply-template" else "/tokenize and /detokenize") in use.source


def test_a_server_without_a_template_endpoint_is_probed_lazily_once_and_refused_with_one_error(serve):
    server, backend = serve("llama", template_route="none")
    templater = backend.templater()
    assert templater.has_chat_template  # /v1/chat/completions applies the server's own
    assert server.state.served == []  # nothing asked until a render is needed
    for _ in range(2):
        with pytest.raises(CapabilityError) as refused:
            templater.check_render()
    message = str(refused.value)
    for alternative in ("model.tokenizer=", "/apply-template", "/tokenize", "protocol.prompt_types=0", "protocol.mode=generate"):
        assert alternative in message
    assert "instruct" not in message
    probed = [s.endpoint for s in server.state.served]
    assert probed == ["/apply-template", "/tokenize"]  # once, not once per check
    assert templater.template_use.rendered_text == "not rendered"


def test_model_tokenizer_that_cannot_be_loaded_or_has_no_template_is_a_config_error(serve, tmp_path):
    _, backend = serve("llama", tokenizer=str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="model.tokenizer="):
        backend.templater().check_render()
    _, plain = serve("llama", tokenizer=str(cached_tiny_causal_lm(arch="llama", chat_template=False)))
    with pytest.raises(ConfigError, match="model.tokenizer=.*no chat template"):
        plain.templater().check_render()


def test_chat_template_none_means_no_template_at_all(serve):
    server, backend = serve("llama", chat_template="none")
    templater = backend.templater()
    assert not templater.has_chat_template
    with pytest.raises(CapabilityError, match="model.chat_template=none"):
        templater.check_render()
    assert server.state.served == []


# -- whole runs ------------------------------------------------------------------------------


def cli(server, out: Path, benchmark: str, *extra: str) -> int:
    return main(
        [
            "run", benchmark, "--out", str(out),
            "--set", "model.backend=openai", "--set", f"model.api_base={server.api_base}",
            "--set", f"model.path={server.state.model_name}", "--set", "run.progress=false",
            "--set", f"run.cache_dir={out.parent / 'cache'}", "--set", "model.max_concurrency=2",
            *extra,
        ]
    )  # fmt: skip


class Recording:
    """The hf generator, keeping every request it is asked."""

    def __init__(self, generator):
        self._generator = generator
        self.requests = []
        self.identity = generator.identity

    def generate(self, requests, progress=None):
        self.requests += list(requests)
        return self._generator.generate(requests, progress)


KOBBQ = ("--set", "protocol.limit=3", "--set", "protocol.prompts=1", "--set", "protocol.permutations=0", "--set", "protocol.statistics=false")


def test_kobbq_auto_generates_through_chat_completions_with_the_messages_hf_renders(serve, tmp_path):
    server, _ = serve("llama", template_route="none")
    assert cli(server, tmp_path / "openai", "kobbq", *KOBBQ) == 0
    chat = server.requests("chat/completions")
    assert chat and server.requests("completions") == []  # no plain text to /v1/completions any more
    sent = sorted(json.dumps(s.body["messages"], ensure_ascii=False) for s in chat)

    local = Recording(hf("llama").generator())
    options = {"limit": 3, "prompts": "1", "permutations": "0", "statistics": False}
    result = run_with_fakes("kobbq", options=options, dataset=bundled_kobbq(), generator=local, templater=hf("llama").templater())
    assert result.summary.metrics.mode == "generate"
    rendered = sorted(json.dumps([{"role": m.role, "content": m.content} for m in r.messages], ensure_ascii=False) for r in local.requests)
    assert sent == rendered

    summary = json.loads((tmp_path / "openai" / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["mode"] == "generate"
    assert summary["model"]["chat_template"]["messages"] == "applied by the server (not visible here)"
    assert result.summary.model.chat_template.messages == "rendered here"
    report = (tmp_path / "openai" / "report.md").read_text(encoding="utf-8")
    assert "chat template**: chat messages: applied by the server (not visible here)" in report


def test_likelihood_runs_that_cannot_render_are_refused_before_anything_is_asked(serve, tmp_path, capfd):
    server, _ = serve("llama", template_route="none")
    assert cli(server, tmp_path / "kobbq", "kobbq", *KOBBQ, "--set", "protocol.mode=likelihood") == 4
    err = capfd.readouterr().err
    assert "model.tokenizer=" in err and "protocol.mode=generate" in err and "instruct" not in err
    assert server.requests("completions") == [] and server.requests("chat/completions") == []  # the truth probe's only
    assert not (tmp_path / "kobbq" / "summary.json").exists()


def test_kobbq_likelihood_with_model_tokenizer_scores_the_rendered_prompt_without_a_second_bos(serve, tmp_path):
    server, _ = serve("llama", template_route="none")
    tokenizer = str(cached_tiny_causal_lm(arch="llama"))
    assert cli(server, tmp_path / "run", "kobbq", *KOBBQ, "--set", "protocol.mode=likelihood", "--set", f"model.tokenizer={tokenizer}") == 0
    prompts = [s.body["prompt"] for s in server.requests("completions")]
    assert prompts and all(p.startswith("<|im_start|>user\n") and "<|im_start|>assistant\n" in p for p in prompts)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["model"]["chat_template"] == {
        "messages": "applied by the server (not visible here)",
        "rendered_text": "rendered here",
        "source": f"model.tokenizer={tokenizer}",
    }


def twbias(data: Path) -> list[str]:
    return [
        "--set", f"data.path={data}", "--set", "protocol.groups=gender", "--set", "protocol.prompt_types=0,1",
        "--set", "protocol.limit=3",
    ]  # fmt: skip


def test_twbias_templated_types_score_as_on_hf_through_the_template_endpoint_else_are_refused(serve, tmp_path, twbias_data, capfd):
    server, _ = serve("llama", template_route="none")
    assert cli(server, tmp_path / "refused", "twbias", *twbias(twbias_data)) == 4
    err = capfd.readouterr().err
    for alternative in ("model.tokenizer=", "/apply-template", "protocol.prompt_types=0"):
        assert alternative in err
    assert "instruct" not in err
    assert server.requests("completions") == []  # refused after the truth probe, before any sentence was scored

    server.state.template_route = "apply-template"
    assert cli(server, tmp_path / "served", "twbias", *twbias(twbias_data)) == 0
    path = str(cached_tiny_causal_lm(arch="llama"))
    local_run = ["run", "twbias", "--out", str(tmp_path / "local"), "--set", "model.backend=hf", "--set", f"model.path={path}"]
    local_run += ["--set", "model.device=cpu", "--set", "run.progress=false", "--set", f"run.cache_dir={tmp_path / 'cache'}"]
    assert main(local_run + twbias(twbias_data)) == 0
    served, local = (json.loads((tmp_path / name / "summary.json").read_text(encoding="utf-8")) for name in ("served", "local"))
    for prompt_type in ("0", "1"):
        have, want = (s["metrics"]["gender"]["female"]["prompts"][prompt_type] for s in (served, local))
        assert have["n"] == want["n"] == 3
        assert have["mean_origin_ppl"] == pytest.approx(want["mean_origin_ppl"], rel=RELATIVE)
        assert have["mean_replace_ppl"] == pytest.approx(want["mean_replace_ppl"], rel=RELATIVE)
    assert served["model"]["chat_template"]["rendered_text"] == "rendered by the server's template endpoint"
    assert local["model"]["chat_template"] == {"messages": "rendered here", "rendered_text": "rendered here", "source": "the tokenizer of model.path"}
