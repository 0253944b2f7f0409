"""Continuation boundaries and the BOS rule, on the tiny tokenizer (hand-checked token splits)."""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("transformers")

from culturebias.testing.tiny_models import BOS, cached_tiny_causal_lm  # noqa: E402
from culturebias.adapters.hf.tokens import AUTHORS, STRADDLE, RequestTokenizer, default_bos_id  # noqa: E402
from culturebias.domain.requests import LoglikelihoodRequest  # noqa: E402


@functools.lru_cache(maxsize=None)
def tokenizer(**options):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(cached_tiny_causal_lm(**options))


def test_bos_is_prepended_only_where_the_tokenizer_adds_it_by_default():
    with_bos = tokenizer(arch="llama")
    without = tokenizer(arch="gpt2")
    # Both tokenizers *have* a BOS token; only the first adds it to plain text.
    assert with_bos.bos_token == without.bos_token == BOS
    assert default_bos_id(with_bos) == with_bos.bos_token_id
    assert default_bos_id(without) is None


def test_empty_context():
    tok = tokenizer(arch="llama")
    hello = tok("hello world", add_special_tokens=False)["input_ids"]  # [he][l][l][o][ w][or][ld]
    assert len(hello) == 7
    seq = RequestTokenizer(tok).encode([LoglikelihoodRequest("", "hello world")])[0]
    assert seq.ids == (tok.bos_token_id, *hello) and seq.start == 1 and seq.n_scored == 7
    seq = RequestTokenizer(tokenizer(arch="gpt2")).encode([LoglikelihoodRequest("", "hello world")])[0]
    assert seq.start == 1 and seq.n_scored == 6  # no BOS by default: tokens 2..n


def test_straddling_token_belongs_to_the_continuation_and_authors_rule_differs():
    tok = tokenizer(arch="llama")
    request = LoglikelihoodRequest("hello ", "world")  # " w" spans the boundary
    straddle = RequestTokenizer(tok, STRADDLE).encode([request])[0]
    authors = RequestTokenizer(tok, AUTHORS).encode([request])[0]
    assert straddle.ids == authors.ids  # the text is tokenised once, without specials
    assert (straddle.start, straddle.n_scored) == (4, 3)
    assert (authors.start, authors.n_scored) == (5, 2)


def test_templated_context_keeps_its_own_bos_and_no_second_one_is_added():
    tok = tokenizer(arch="llama")
    context = "<s><|im_start|>user\n你想說什麼？<|im_end|>\n<|im_start|>assistant\n"
    seq = RequestTokenizer(tok).encode([LoglikelihoodRequest(context, "男生收入高")])[0]
    assert seq.ids.count(tok.bos_token_id) == 1 and seq.ids[0] == tok.bos_token_id
    assert seq.n_scored == 6  # [男生][b][b][bb][b][b高]
    assert tok.decode(seq.ids[seq.start :]) == "男生收入高"


def test_truncation_keeps_the_end():
    tok = tokenizer(arch="llama")
    seq = RequestTokenizer(tok, max_length=5).encode([LoglikelihoodRequest("The answer is", " A")])[0]
    full = tok("The answer is A", add_special_tokens=False)["input_ids"]
    assert len(full) == 4  # [The][ answer][ is][ A]
    assert seq.ids == tuple(full) and seq.n_scored == 1 and not seq.truncated
    seq = RequestTokenizer(tok, max_length=3).encode([LoglikelihoodRequest("The answer is", " A")])[0]
    assert seq.truncated and seq.ids == tuple(full[-3:]) and seq.n_scored == 1


def test_empty_continuation_scores_nothing():
    seq = RequestTokenizer(tokenizer(arch="llama")).encode([LoglikelihoodRequest("abc", "")])[0]
    assert seq.n_scored == 0
