"""HFMaskedScorer against a one-mask-per-forward-pass reference on a BERT-shaped random model."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from culturebias.adapters.hf.masked import HFMaskedScorer  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_masked_lm  # noqa: E402
from culturebias.testing.tolerance import assert_model_close  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.domain.errors import ConfigError, DataError  # noqa: E402
from culturebias.domain.requests import PseudoLoglikelihoodRequest as Request  # noqa: E402

TEXTS = [
    "The doctor said that the nurse would arrive soon.",
    "Kiwis love rugby, and Aucklanders complain about traffic.",
    "My whānau brought kai to the marae.",
    "The quick brown fox jumps over the lazy dog.",
    "媽媽每天在家照顧小孩，爸爸出門上班賺錢。",
    "A",
]


def reference_tokens(model, tokenizer, text: str) -> list[tuple[int, int, float]]:
    """(start, end, log p) of every token: mask one token, run one unpadded forward pass, repeat."""
    encoded = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    ids = encoded["input_ids"]
    out = []
    for i, ((start, end), special) in enumerate(zip(encoded["offset_mapping"], encoded["special_tokens_mask"])):
        if special or end <= start:
            continue
        masked = torch.tensor([ids])
        masked[0, i] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=masked, attention_mask=torch.ones_like(masked)).logits[0, i]
        out.append((start, end, torch.log_softmax(logits.float(), -1)[ids[i]].item()))
    return out


def reference(tokens: list[tuple[int, int, float]], request: Request) -> tuple[float, int]:
    inside = [value for start, end, value in tokens if start < request.span_end and end > request.span_start]
    return sum(inside), len(inside)


def settings(path, **kwargs) -> HFOptions:
    return HFOptions(backend="hf", path=str(path), kind="masked", device="cpu", **kwargs)


@pytest.fixture(scope="module")
def model_path() -> Path:
    return cached_tiny_masked_lm()


def requests() -> list[Request]:
    out = []
    for text in TEXTS:
        out += [Request(text, 0, len(text)), Request(text, min(4, len(text)), len(text))]
    out.append(Request(TEXTS[0], 10, 10))  # empty span
    return out


@pytest.fixture(scope="module")
def expected(model_path, tmp_path_factory) -> list[tuple[float, int]]:
    scorer = HFMaskedScorer(settings(model_path), tmp_path_factory.mktemp("ref"))
    tokens = {text: reference_tokens(scorer._model, scorer._tokenizer, text) for text in TEXTS}
    return [reference(tokens[r.text], r) for r in requests()]


@pytest.mark.parametrize("batch_size,budget", [(16, None), (2, None), (3, 40_000)])
def test_batched_values_equal_the_one_mask_reference(model_path, tmp_path, expected, batch_size, budget):
    scorer = HFMaskedScorer(settings(model_path, batch_size=batch_size), tmp_path, logits_budget=budget)
    got = scorer.pseudo_loglikelihood(requests())
    for (expected, n), result in zip(expected, got):
        assert result.n_tokens == n
        assert_model_close(result.logprob, expected)  # float32 kernels: masked copies batched differently
    assert got[-1].n_tokens == 0 and got[-1].logprob == 0.0


def test_all_masked_copies_of_a_sentence_share_a_forward_pass_and_budgets_split_them(model_path, tmp_path):
    scorer = HFMaskedScorer(settings(model_path, batch_size=64), tmp_path)
    calls = []
    original = scorer._forward
    scorer._forward = lambda rows: calls.append(len(rows)) or original(rows)
    scorer.pseudo_loglikelihood([Request(t, 0, len(t)) for t in TEXTS[:4]])
    assert len(calls) == 1  # four sentences, every masked copy, one pass
    vocab = scorer._model.config.vocab_size
    width = len(scorer._tokenizer(TEXTS[1])["input_ids"])
    small = HFMaskedScorer(settings(model_path, batch_size=64), tmp_path, logits_budget=4 * width * vocab)
    calls.clear()
    original_small = small._forward
    small._forward = lambda rows: calls.append(len(rows)) or original_small(rows)
    [result] = small.pseudo_loglikelihood([Request(TEXTS[1], 0, len(TEXTS[1]))])
    assert calls == [4] * (result.n_tokens // 4) + ([result.n_tokens % 4] if result.n_tokens % 4 else [])


def test_identity_and_provenance(model_path, tmp_path):
    scorer = HFMaskedScorer(settings(model_path), tmp_path)
    assert scorer.identity.kind == "masked" and scorer.identity.backend == "hf"
    assert scorer.identity.parameters > 0 and scorer.identity.tokenizer
    assert scorer.provenance.boundary_rule == "mask-each-token-overlapping-span"


def test_too_long_texts_and_missing_paths_are_typed_errors(model_path, tmp_path):
    scorer = HFMaskedScorer(settings(model_path, max_length=8), tmp_path)
    with pytest.raises(DataError):
        scorer.pseudo_loglikelihood([Request(TEXTS[0], 0, 5)])
    with pytest.raises(ConfigError):
        HFMaskedScorer(HFOptions(kind="masked"), tmp_path)


def test_the_hf_backend_builds_it_for_masked_models_only(model_path, tmp_path):
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.domain.errors import CapabilityError

    backend = create_backend(settings(model_path), tmp_path)
    assert isinstance(backend.pseudo_scorer(), HFMaskedScorer)
    with pytest.raises(CapabilityError):
        backend.scorer()
    with pytest.raises(CapabilityError):
        create_backend(HFOptions(), tmp_path).pseudo_scorer()
