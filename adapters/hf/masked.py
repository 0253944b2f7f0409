"""Batched pseudo-log-likelihood of a masked LM (PROTOCOLS §0.2).

For a request ``(text, span_start, span_end)`` every token whose characters
overlap the span is masked once, alone, and ``log p(token | rest)`` is summed.
The text is a plain sentence, so it is tokenised *with* the model's special
tokens ([CLS] … [SEP]), which a masked LM needs to predict well.

All masked copies of a sentence go into one forward pass, together with other
sentences' copies (up to ``model.batch_size`` sentences per pass), right-padded
under an attention mask. Passes shrink so that the float logits they hold stay
under a budget; a sentence too long for the budget alone is split over passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from culturebias.adapters.hf.identified import Identified
from culturebias.adapters.hf.batch_size import auto_batch_size
from culturebias.adapters.hf.loading import (
    from_pretrained_options,
    load_tokenizer,
    load_weights,
    resolve_device,
    resolve_dtype,
    resolve_source,
    hf_identity,
)
from culturebias.adapters.hf.local_backend import score_provenance
from culturebias.adapters.hf.model_options import LocalModelOptions
from culturebias.domain.errors import ConfigError, DataError
from culturebias.logs import get_logger
from culturebias.ports.progress import ProgressTask
from culturebias.ports.recording import BatchSink
from culturebias.domain.model_options import AutoBatch
from culturebias.domain.requests import PseudoLoglikelihoodRequest, PseudoLoglikelihoodResult

log = get_logger("culturebias.hf")

# Float logits held at once (rows × positions × vocabulary), per device kind.
LOGITS_BUDGET = {"cpu": 2**25, "cuda": 2**28}
SPAN_RULE = "mask-each-token-overlapping-span"


@dataclass(frozen=True)
class _Encoded:
    index: int  # request position
    ids: tuple[int, ...]
    token_types: tuple[int, ...] | None
    masked: tuple[int, ...]  # token positions to mask, one copy each


def _max_positions(model: Any, tokenizer: Any, configured: int | None) -> int:  # Any: a transformers model and tokenizer
    if configured:
        return configured
    limits = [getattr(model.config, "max_position_embeddings", None)]
    tokenizer_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tokenizer_limit, int) and tokenizer_limit < 1_000_000:
        limits.append(tokenizer_limit)
    usable = [v for v in limits if isinstance(v, int) and v > 0]
    return min(usable) if usable else 512


class HFMaskedScorer(Identified):
    def __init__(self, options: LocalModelOptions, cache_dir: Path, *, logits_budget: int | None = None):
        from transformers import AutoModelForMaskedLM

        from culturebias.adapters.hf import embedded

        if not options.path or embedded.is_embedded(options.path):
            raise ConfigError("model.kind=masked needs model.path set to a masked LM (a local folder or a hub id)")
        self._device = resolve_device(options.device)
        source = resolve_source(options, Path(cache_dir))
        common = from_pretrained_options(options, source)
        log.info("loading masked LM", model=source.name, location=source.location, device=self._device)
        tokenizer = load_tokenizer(options, source, common)
        model = load_weights(AutoModelForMaskedLM, options, source, dtype=resolve_dtype(options.dtype), **common)
        if not getattr(tokenizer, "is_fast", False):
            raise ConfigError(f"masked LM {source.name!r}: a fast tokenizer is needed (character offsets of tokens)")
        if tokenizer.mask_token_id is None:
            raise ConfigError(f"masked LM {source.name!r}: its tokenizer has no mask token")
        self._model = model.to(self._device).eval()
        self._tokenizer = tokenizer
        self._max_positions = _max_positions(model, tokenizer, options.max_length)
        if isinstance(options.batch_size, AutoBatch):
            found = auto_batch_size(model, self._device, options.batch_size, max_length=self._max_positions)
            options = options.model_copy(update={"batch_size": found})  # the number used is the number recorded
        self._batch_size = options.settled_batch_size()
        kind = "cuda" if str(self._device).startswith("cuda") else "cpu"
        self._budget = logits_budget or LOGITS_BUDGET[kind]
        self._pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self._identity = hf_identity(source, tokenizer, model, options.dtype, "masked", Path(cache_dir))
        self._provenance = score_provenance("hf", options, device=str(self._device), boundary_rule=SPAN_RULE)

    def _encode(self, index: int, request: PseudoLoglikelihoodRequest) -> _Encoded:
        encoded = self._tokenizer(
            request.text,
            add_special_tokens=True,
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
            truncation=False,
        )
        ids = encoded["input_ids"]
        if len(ids) > self._max_positions:
            raise DataError(
                f"text of {len(ids)} tokens exceeds the masked LM's {self._max_positions} positions: {request.text[:60]!r}",
                field="text",
            )
        masked = tuple(
            i
            for i, ((start, end), special) in enumerate(zip(encoded["offset_mapping"], encoded["special_tokens_mask"]))
            if not special and end > start and start < request.span_end and end > request.span_start
        )
        types = encoded.get("token_type_ids")
        return _Encoded(index, tuple(ids), tuple(types) if types is not None else None, masked)

    def _passes(self, items: list[_Encoded]) -> Iterator[list[tuple[_Encoded, int]]]:
        """Forward passes as lists of (sentence, masked position): whole sentences while they fit."""
        vocab = self._model.config.vocab_size
        current: list[tuple[_Encoded, int]] = []
        sentences = 0
        width = 0
        for item in items:
            rows = [(item, position) for position in item.masked]
            new_width = max(width, len(item.ids))
            if current and (
                sentences + 1 > self._batch_size or (len(current) + len(rows)) * new_width * vocab > self._budget
            ):
                yield current
                current, sentences, new_width = [], 0, len(item.ids)
            max_rows = max(1, self._budget // (len(item.ids) * vocab))
            if len(rows) > max_rows:  # too big for one pass even alone
                if current:
                    yield current
                for start in range(0, len(rows), max_rows):
                    yield rows[start : start + max_rows]
                current, sentences, width = [], 0, 0
                continue
            current.extend(rows)
            sentences += 1
            width = new_width
        if current:
            yield current

    def _forward(self, rows: list[tuple[_Encoded, int]]) -> list[float]:
        import torch

        width = max(len(item.ids) for item, _ in rows)
        input_ids = torch.full((len(rows), width), self._pad_id, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        with_types = rows[0][0].token_types is not None
        token_types = torch.zeros((len(rows), width), dtype=torch.long) if with_types else None
        positions = torch.empty(len(rows), dtype=torch.long)
        targets = torch.empty(len(rows), dtype=torch.long)
        for r, (item, position) in enumerate(rows):
            n = len(item.ids)
            input_ids[r, :n] = torch.tensor(item.ids)
            attention[r, :n] = 1
            if token_types is not None and item.token_types is not None:
                token_types[r, :n] = torch.tensor(item.token_types)
            targets[r] = item.ids[position]
            positions[r] = position
            input_ids[r, position] = self._tokenizer.mask_token_id
        inputs = {"input_ids": input_ids, "attention_mask": attention}
        if token_types is not None:
            inputs["token_type_ids"] = token_types
        inputs = {k: v.to(self._device) for k, v in inputs.items()}
        with torch.inference_mode():
            logits = self._model(**inputs).logits
            picked = logits[torch.arange(len(rows), device=logits.device), positions.to(logits.device)].float()
            logprobs = torch.log_softmax(picked, dim=-1).gather(1, targets.to(logits.device)[:, None])[:, 0]
        return logprobs.cpu().tolist()

    def pseudo_loglikelihood(
        self, requests: Sequence[PseudoLoglikelihoodRequest], progress: ProgressTask | None = None
    ) -> list[PseudoLoglikelihoodResult]:
        items = [self._encode(i, r) for i, r in enumerate(requests)]
        totals = [0.0] * len(items)
        remaining = [len(item.masked) for item in items]
        # Results stored by an interrupted attempt at these requests: passes of only those are skipped.
        sink = progress if isinstance(progress, BatchSink) else None
        known = {} if sink is None else {i: v for i in range(len(items)) if (v := sink.known(i)) is not None}
        # Longest first: the largest pass runs first, so memory trouble shows at once.
        ordered = sorted((item for item in items if item.masked), key=lambda item: -len(item.ids))
        for rows in self._passes(ordered):
            if known and all(item.index in known for item, _ in rows):
                continue
            for (item, _), value in zip(rows, self._forward(rows)):
                totals[item.index] += value
                remaining[item.index] -= 1
            if progress is not None:
                finished = {item.index for item, _ in rows if remaining[item.index] == 0}
                progress.advance(len(finished))
                if sink is not None and finished - known.keys():
                    sink.deliver({i: PseudoLoglikelihoodResult(totals[i], len(items[i].masked)) for i in finished if i not in known})
        if progress is not None:
            progress.advance(sum(1 for item in items if not item.masked))
        return [known.get(i) or PseudoLoglikelihoodResult(totals[i], len(item.masked)) for i, item in enumerate(items)]
