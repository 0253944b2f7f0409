"""The tiny test-model builders are deterministic and give working multilingual tokenizers."""

from __future__ import annotations

import hashlib

import pytest

pytest.importorskip("transformers")

from culturebias.testing.tiny_models import build_tiny_causal_lm, build_tiny_masked_lm, cached_tiny_causal_lm  # noqa: E402


def _digest(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_same_seed_same_files_other_seed_other_weights(tmp_path):
    a = _digest(build_tiny_causal_lm(tmp_path / "a", seed=3))
    b = _digest(build_tiny_causal_lm(tmp_path / "b", seed=3))
    c = _digest(build_tiny_causal_lm(tmp_path / "c", seed=4))
    assert a == b
    assert a["tokenizer.json"] == c["tokenizer.json"] and a["model.safetensors"] != c["model.safetensors"]


def test_cached_builder_returns_one_folder_per_arguments():
    assert cached_tiny_causal_lm(arch="gpt2") == cached_tiny_causal_lm(arch="gpt2")
    assert cached_tiny_causal_lm(arch="gpt2") != cached_tiny_causal_lm(arch="llama")


def test_tokenizers_round_trip_chinese_korean_english(tmp_path):
    from transformers import AutoTokenizer

    text = "男生收入高才會有話語權 그 사람은 의사입니다. The nurse said hi."
    causal = AutoTokenizer.from_pretrained(cached_tiny_causal_lm())
    ids = causal(text, add_special_tokens=False)["input_ids"]
    assert causal.decode(ids) == text
    assert causal.unk_token_id not in ids
    masked = AutoTokenizer.from_pretrained(build_tiny_masked_lm(tmp_path / "m"))
    encoded = masked("男生收入高 그 사람은")["input_ids"]
    assert encoded[0] == masked.cls_token_id and encoded[-1] == masked.sep_token_id
    assert masked.mask_token == "[MASK]" and masked.unk_token_id not in encoded


def test_a_masked_model_built_on_a_saved_tokenizer_is_the_same_files(tmp_path):
    # WordPiece training numbers its pieces in hash order; a saved tokenizer pins them (reference runs rely on it).
    first = build_tiny_masked_lm(tmp_path / "a", seed=1)
    assert _digest(build_tiny_masked_lm(tmp_path / "b", seed=1, tokenizer=first)) == _digest(first)
