"""The split scoring head: chosen only where it reproduces the model's logits, and equal to the plain head."""

from __future__ import annotations

import functools

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from culturebias.adapters.hf import scoring_head  # noqa: E402
from culturebias.adapters.hf.scoring_head import LogitsHead, SplitHead, node_scores  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402
from culturebias.testing.tolerance import assert_model_close  # noqa: E402


@functools.lru_cache(maxsize=None)
def tiny(arch: str):
    return transformers.AutoModelForCausalLM.from_pretrained(str(cached_tiny_causal_lm(arch=arch)), dtype=torch.float32).eval()


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_plain_causal_lms_get_the_split_head(arch):
    assert isinstance(scoring_head.scoring_head(tiny(arch)), SplitHead)
    assert isinstance(scoring_head.scoring_head(tiny(arch), allow_split=False), LogitsHead)


def test_a_model_that_rescales_its_logits_keeps_the_plain_head():
    model = tiny("llama")

    class SoftCapped(torch.nn.Module):  # what Gemma-2's final_logit_softcapping does to the logits
        def __init__(self):
            super().__init__()
            self.inner = model

        def get_decoder(self):
            return model.get_decoder()

        def get_output_embeddings(self):
            return model.get_output_embeddings()

        def forward(self, **kwargs):
            out = model(**kwargs)
            out.logits = 30.0 * torch.tanh(out.logits / 30.0)
            return out

    assert isinstance(scoring_head.scoring_head(SoftCapped()), LogitsHead)


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_split_head_scores_equal_the_full_logits(monkeypatch, arch):
    """Unsorted parents, repeated parents (a token-tree node with several children) and chunks smaller than the input."""
    model = tiny(arch)
    monkeypatch.setattr(scoring_head, "CHUNK_ELEMENTS", 3 * model.get_output_embeddings().weight.shape[0])
    head = scoring_head.scoring_head(model)
    assert isinstance(head, SplitHead)
    generator = torch.Generator().manual_seed(3)
    ids = torch.randint(0, model.config.vocab_size, (2, 9), generator=generator)
    with torch.inference_mode():
        logits = model(input_ids=ids).logits.reshape(-1, model.config.vocab_size)
        parents = torch.tensor([5, 0, 5, 17, 3, 3, 3, 9, 1, 12])
        targets = torch.randint(0, model.config.vocab_size, (len(parents),), generator=generator)
        targets[1] = int(logits[0].argmax())  # one greedy target
        got, got_greedy = head.score(parents, targets, input_ids=ids)
        want, want_greedy = node_scores(logits, parents, targets)
        plain, plain_greedy = LogitsHead(model).score(parents, targets, input_ids=ids)  # keeps logits from column 0 on
        late, _ = LogitsHead(model).score(parents[parents % 9 >= 3], targets[parents % 9 >= 3], input_ids=ids)
    assert got.dtype == torch.float64
    assert_model_close(got, want, what="the split head's log-probabilities")
    assert got_greedy.tolist() == want_greedy.tolist()
    assert bool(got_greedy[1])
    assert_model_close(plain, want)
    assert plain_greedy.tolist() == want_greedy.tolist()
    assert_model_close(late, want[parents % 9 >= 3])  # logits kept from column 3 on only
    reference = torch.log_softmax(logits.double(), dim=-1)[parents, targets]
    assert_model_close(got, reference)
