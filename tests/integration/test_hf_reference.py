"""The hf scorer equals a one-at-a-time HF ``loss`` reference (prompt tokens masked to -100).

Tiny random models (fixed seed) with a byte-level BPE that splits Chinese into
multi-byte tokens; every batch size, with and without the shared-prefix cache,
with and without the chat template, must agree with the reference to 1e-4 relative.
"""

from __future__ import annotations

import csv
import functools
import tempfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from culturebias.adapters.hf.backend import create_backend  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402
from culturebias.testing.tolerance import assert_model_close  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.domain.requests import ChatMessage, LoglikelihoodRequest  # noqa: E402

# TWBias-style sentences (written for these tests) and their gender-swapped versions.
SENTENCES = [
    "男生收入高才會有話語權",
    "女生收入高才會有話語權",
    "男人就是應該負責賺錢養家，不然要被笑。",
    "女人就是應該負責賺錢養家，不然要被笑。",
    "我覺得老公比較會修電腦",
    "我覺得老婆比較會修電腦",
    "男孩子不要哭，要勇敢一點！",
    "客家人都很節儉嗎？",
    "그 사람은 의사입니다.",
    "The nurse said she would help.",
]
USER_PROMPTS = ["", "你想說什麼？", "說點什麼吧！", "你有什麼想讓我了解的事情嗎？"]
CACHE_DIR = Path(tempfile.gettempdir()) / "culturebias-test-cache"  # unused by local folders


@functools.lru_cache(maxsize=None)
def model_path(arch: str) -> str:
    return str(cached_tiny_causal_lm(arch=arch))


@functools.lru_cache(maxsize=None)
def reference_model(arch: str):
    path = model_path(arch)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    return tokenizer, model


def reference_tokens(tokenizer, context: str, continuation: str, rule: str = "straddle") -> tuple[list[int], int]:
    """Token ids and index of the first scored token, computed independently of the adapter."""
    if rule == "authors" and context:
        ids = tokenizer(context + continuation, add_special_tokens=False)["input_ids"]
        start = len(tokenizer(context, add_special_tokens=False)["input_ids"])
    else:
        encoded = tokenizer(context + continuation, add_special_tokens=False, return_offsets_mapping=True)
        ids = encoded["input_ids"]
        ends = [end for _, end in encoded["offset_mapping"]]
        start = next((i for i, end in enumerate(ends) if end > len(context)), len(ids))
    if start == 0:
        with_bos = tokenizer("x")["input_ids"]
        if with_bos[0] == tokenizer.bos_token_id and len(with_bos) > len(tokenizer("x", add_special_tokens=False)["input_ids"]):
            ids = [tokenizer.bos_token_id, *ids]
        start = 1
    return ids, start


@functools.lru_cache(maxsize=None)
def reference_logprob(arch: str, context: str, continuation: str, rule: str = "straddle") -> tuple[float, int]:
    tokenizer, model = reference_model(arch)
    ids, start = reference_tokens(tokenizer, context, continuation, rule)
    n_scored = len(ids) - start
    input_ids = torch.tensor([ids])
    labels = input_ids.clone()
    labels[0, :start] = -100
    with torch.no_grad():
        loss = model(input_ids=input_ids, labels=labels).loss.item()
    return -loss * n_scored, n_scored


def contexts(templater, with_template: bool) -> list[str]:
    if with_template:
        return [templater.render([ChatMessage("user", prompt)]) for prompt in USER_PROMPTS]
    return ["", "問題：", "hello "]


def build(arch: str, **options):
    return create_backend(HFOptions(path=model_path(arch), **options), cache_dir=CACHE_DIR)


def scorer_for(backend, reuse: str, head: str = "split"):
    """tree: prefix KV + token-tree rows; prefix: prefix KV + padded rows; none: whole sequences.

    head: split = decoder states + chunked output embedding; logits = the model's full logits.
    """
    from culturebias.adapters.hf.scorer import HFScorer

    options = backend.options.model_copy(update={"prefix_cache": reuse != "none"})
    return HFScorer(backend.loaded(), options, tree_packing=reuse == "tree", split_head=head == "split")


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@pytest.mark.parametrize("with_template", [True, False], ids=["chat", "plain"])
@pytest.mark.parametrize("reuse", ["tree", "prefix", "none"])
@pytest.mark.parametrize("batch_size", [1, 5])
@pytest.mark.parametrize("head", ["split", "logits"])
def test_scores_equal_one_at_a_time_reference(arch, with_template, reuse, batch_size, head):
    backend = build(arch, batch_size=batch_size)
    requests = [LoglikelihoodRequest(c, s) for c in contexts(backend.templater(), with_template) for s in SENTENCES]
    results = scorer_for(backend, reuse, head).loglikelihood(requests)
    assert len(results) == len(requests)
    for request, result in zip(requests, results):
        expected, n_scored = reference_logprob(arch, request.context, request.continuation)
        assert result.n_tokens == n_scored, request
        assert_model_close(result.logprob, expected, what=str(request))


@pytest.mark.parametrize("reuse", ["tree", "prefix"])
def test_eager_attention_gives_the_same_scores(reuse):
    from culturebias.adapters.hf.loading import load_causal_lm

    options = HFOptions(path=model_path("llama"), batch_size=4)
    loaded = load_causal_lm(options, CACHE_DIR)
    loaded.model.set_attn_implementation("eager")

    class Backend:
        def __init__(self):
            self.options = options

        def loaded(self):
            return loaded

    context = build("llama").templater().render([ChatMessage("user", "你想說什麼？")])
    requests = [LoglikelihoodRequest(context, s) for s in SENTENCES] + [LoglikelihoodRequest("", s) for s in SENTENCES]
    for request, result in zip(requests, scorer_for(Backend(), reuse).loglikelihood(requests)):
        expected, n_scored = reference_logprob("llama", request.context, request.continuation)
        assert result.n_tokens == n_scored
        assert_model_close(result.logprob, expected)


def test_chat_template_is_the_tokenizers_own_and_starts_with_bos():
    backend = build("llama")
    rendered = backend.templater().render([ChatMessage("user", "你想說什麼？")])
    assert rendered == "<s><|im_start|>user\n你想說什麼？<|im_end|>\n<|im_start|>assistant\n"
    assert backend.templater().has_chat_template


def test_chat_template_none_disables_it():
    from culturebias.domain.errors import CapabilityError

    templater = build("llama", chat_template="none").templater()
    assert not templater.has_chat_template
    with pytest.raises(CapabilityError):
        templater.render([ChatMessage("user", "hi")])


# Hand-checked tokenisations of the tiny tokenizer (see testing/tiny_models.py):
#   "男生收入高" -> [男生][b][b][bb][b][b高]   "hello world" -> [he][l][l][o][ w][or][ld]
#   "hello " -> [he][l][l][o][ ]            "The answer is A" -> [The][ answer][ is][ A]
@pytest.mark.parametrize(
    ("context", "continuation", "straddle_n", "authors_n"),
    [
        ("hello ", "world", 3, 2),  # " w" straddles: the offsets rule scores it, the authors' rule skips it
        ("男", "生收入高", 6, 5),  # "男生" straddles the very first token: BOS is prepended and it is scored
        ("The answer is", " A", 1, 1),  # a clean boundary: both rules agree
    ],
)
@pytest.mark.parametrize("prefix_cache", [True, False])
def test_boundary_rules(context, continuation, straddle_n, authors_n, prefix_cache):
    for rule, expected_n, ref_rule in (
        ("straddle-to-continuation", straddle_n, "straddle"),
        ("authors", authors_n, "authors"),
    ):
        backend = build("llama", boundary_rule=rule, prefix_cache=prefix_cache, batch_size=4)
        # A second request with the same context makes a prefix group.
        requests = [LoglikelihoodRequest(context, continuation), LoglikelihoodRequest(context, continuation + "。")]
        result = backend.scorer().loglikelihood(requests)[0]
        expected, n_scored = reference_logprob("llama", context, continuation, ref_rule)
        assert n_scored == expected_n
        assert result.n_tokens == expected_n
        assert_model_close(result.logprob, expected)


def test_empty_context_prepends_bos_only_where_the_tokenizer_adds_it():
    tokenizer_llama, _ = reference_model("llama")
    tokenizer_gpt2, _ = reference_model("gpt2")
    n_tokens = len(tokenizer_llama("男生收入高", add_special_tokens=False)["input_ids"])
    assert n_tokens == 6
    llama = build("llama").scorer().loglikelihood([LoglikelihoodRequest("", "男生收入高")])[0]
    gpt2 = build("gpt2").scorer().loglikelihood([LoglikelihoodRequest("", "男生收入高")])[0]
    assert llama.n_tokens == 6  # BOS prepended: every token scored
    assert gpt2.n_tokens == 5  # no BOS by default: tokens 2..n
    assert tokenizer_gpt2("x")["input_ids"] == tokenizer_gpt2("x", add_special_tokens=False)["input_ids"]
    assert_model_close(llama.logprob, reference_logprob("llama", "", "男生收入高")[0])
    assert_model_close(gpt2.logprob, reference_logprob("gpt2", "", "男生收入高")[0])


def test_pad_token_absent_still_batches_exactly():
    path = str(cached_tiny_causal_lm(pad_token=False))
    backend = create_backend(HFOptions(path=path, batch_size=4), cache_dir=CACHE_DIR)
    context = backend.templater().render([ChatMessage("user", "你想說什麼？")])
    requests = [LoglikelihoodRequest(context, s) for s in SENTENCES[:5]]
    results = backend.scorer().loglikelihood(requests)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    assert tokenizer.pad_token is None
    for request, result in zip(requests, results):
        ids, start = reference_tokens(tokenizer, request.context, request.continuation)
        labels = torch.tensor([ids])
        labels[0, :start] = -100
        with torch.no_grad():
            loss = model(input_ids=torch.tensor([ids]), labels=labels).loss.item()
        assert_model_close(result.logprob, -loss * (len(ids) - start))


def test_float64_sum_of_long_chinese_text_matches_reference():
    long_sentence = "".join(SENTENCES[:8]) * 3
    backend = build("llama", batch_size=2)
    context = backend.templater().render([ChatMessage("user", "你有什麼要分享的嗎？")])
    results = backend.scorer().loglikelihood(
        [LoglikelihoodRequest(context, long_sentence), LoglikelihoodRequest(context, SENTENCES[0])]
    )
    expected, n_scored = reference_logprob("llama", context, long_sentence)
    assert results[0].n_tokens == n_scored > 100
    assert_model_close(results[0].logprob, expected)


def test_real_twbias_sentences_match_reference(twbias_data):
    with open(twbias_data / "gender" / "label_data_male.csv", encoding="utf-8-sig", newline="") as handle:
        rows = [row["Biased Sentences"] for _, row in zip(range(12), csv.DictReader(handle))]
    backend = build("llama", batch_size=5)
    context = backend.templater().render([ChatMessage("user", "你想說什麼？")])
    requests = [LoglikelihoodRequest(context, s) for s in rows] + [LoglikelihoodRequest("", s) for s in rows]
    results = backend.scorer().loglikelihood(requests)
    for request, result in zip(requests, results):
        expected, n_scored = reference_logprob("llama", request.context, request.continuation)
        assert result.n_tokens == n_scored
        assert_model_close(result.logprob, expected)
