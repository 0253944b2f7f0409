"""Where the OpenAI test server's prompt tokens and their log-probabilities come from.

``CharacterTokenSource`` treats each character as a token and asks any ``LoglikelihoodScorer``
port for it; ``HFTokenSource`` runs a transformers causal LM (one forward pass, BOS added as
serving engines do). ``Echo`` is what a source returns for one prompt: every prompt token, its
log-probability and the argmax, and the greedy next token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from culturebias.domain.requests import LoglikelihoodRequest
from culturebias.ports.scoring import LoglikelihoodScorer

OffsetStyle = Literal["incremental", "per-token"]


@dataclass(frozen=True)
class Token:
    text: str  # decoded text, "" for a partial UTF-8 byte (incremental offsets)
    logprob: float | None
    top: dict[str, float] | None  # the argmax token and its log-probability


@dataclass(frozen=True)
class Echo:
    prompt: list[Token]
    next_token: Token  # the greedy continuation, for max_tokens >= 1
    ids: list[int] = field(default_factory=list)  # the prompt's token ids, what a tokenize route returns


class TokenSource(Protocol):
    def echo(self, prompt: str, offsets: OffsetStyle, late: bool = False) -> Echo:
        """``late``: every value from the logits one position late, the real llama-cpp-python bug (where it can be made)."""
        ...

    def ids(self, text: str) -> list[int]:
        """The text's token ids as the echo tokenises it."""
        ...


class CharacterTokenSource:
    """Every character one token; its log-probability comes from a scorer port given the text before it."""

    def __init__(self, scorer: LoglikelihoodScorer, greedy_next: str = " "):
        self._scorer = scorer
        self._next = greedy_next

    def echo(self, prompt: str, offsets: OffsetStyle, late: bool = False) -> Echo:
        # ``late``: character i scored after the text up to and including itself, as the buggy server does
        requests = [LoglikelihoodRequest(prompt[: i + 1 if late else i], prompt[i]) for i in range(1, len(prompt))]
        results = self._scorer.loglikelihood(requests) if requests else []
        tokens = [Token(prompt[0], None, None)] if prompt else []
        tokens += [Token(prompt[i + 1], r.logprob, None) for i, r in enumerate(results)]
        return Echo(tokens, Token(self._next, 0.0, None), self.ids(prompt))

    def ids(self, text: str) -> list[int]:
        return [ord(c) for c in text]


class HFTokenSource:
    """A transformers causal LM: one forward pass per prompt, BOS added where the tokenizer adds one."""

    def __init__(self, model_path: str):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._torch = torch
        self.tokenizer: Any = AutoTokenizer.from_pretrained(model_path)  # Any: transformers types decode(ids) as str | list[str]
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()

    def _texts(self, ids: list[int], offsets: OffsetStyle) -> list[str]:
        decode = self.tokenizer.decode
        if offsets == "per-token":
            return [decode([i]) for i in ids]
        texts, previous = [], ""
        for n in range(1, len(ids) + 1):
            text = decode(ids[:n])
            if text.endswith("\ufffd"):  # an incomplete character: held back until complete
                texts.append("")
                continue
            texts.append(text[len(previous) :])
            previous = text
        return texts

    def ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def echo(self, prompt: str, offsets: OffsetStyle, late: bool = False) -> Echo:
        torch = self._torch
        ids = self.tokenizer(prompt, add_special_tokens=True)["input_ids"]
        with torch.no_grad():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        logprobs = torch.log_softmax(logits, dim=-1)
        texts = self._texts(ids, offsets)
        best = logprobs.argmax(dim=-1)
        tokens = [Token(texts[0], None, None)]
        for i in range(1, len(ids)):
            # Token i is predicted by the logits after token i-1; ``late`` takes those after token i itself.
            at = i if late else i - 1
            row = logprobs[at]
            top_id = int(best[at])
            tokens.append(Token(texts[i], float(row[ids[i]]), {self.tokenizer.decode([top_id]): float(row[top_id])}))
        next_id = int(best[-1])
        next_text = self._texts(ids + [next_id], offsets)[-1]
        return Echo(tokens, Token(next_text, float(logprobs[-1, next_id]), None), list(ids))
