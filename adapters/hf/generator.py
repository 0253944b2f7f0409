"""Batched text generation (PROTOCOLS §0.3): left padding, greedy by default, seeded sampling.

Requests with equal ``GenerationParams`` share batches (longest prompts first).
Chat messages are rendered with the model's own template; a model without one
gets the message contents joined by blank lines. Only the new text comes back,
cut before the first stop string. Greedy output does not depend on batching.
Sampling (``params.mode`` sample or model; unset values are the model's
``generation_config``) draws each request from its own generator seeded from
``params.seed`` and its prompt (``adapters/hf/sampling.py`` says what that guarantees).

Greedy requests run their shared prompt prefixes once (the option orders of a BBQ
item, the instruction across items) where the model takes custom attention masks and
has no sliding window (``model.shared_generation``, on by default; other models fall back to
``model.generate`` on whole prompts, logged once): torch models on one
preallocated key/value buffer with prompt-lookup drafts (``buffered_generation``),
the onnx facade on the radix prefill (``shared_generation``). The replies are the
same either way (perf/README.md, "bbq_generation", says where it is faster).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from culturebias.adapters.hf.loading import LoadedModel
from culturebias.adapters.hf.scorer import model_max_length
from culturebias.adapters.hf.model_options import LocalModelOptions
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import GenerationParams, GenerationRequest, GenerationResult
from culturebias.logs import get_logger
from culturebias.ports.progress import ProgressTask
from culturebias.ports.templating import ChatTemplater
from culturebias.adapters.hf.dedupe import stored_attempt, unique_requests
from culturebias.adapters.hf.sampling import resolve_sampling
from culturebias.adapters.hf.buffered_generation import buffered_greedy_generate, prefix_sharing_obstacle, shares_prefixes
from culturebias.adapters.hf.shared_generation import shared_batches, greedy_generate

log = get_logger("culturebias.hf")

# Turn-ending tokens of common chat formats: generation stops at any that the vocabulary has.
END_OF_TURN_TOKENS = ("<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>", "<|endoftext|>")


_FELL_BACK: set[str] = set()  # models whose fallback to whole prompts was logged (once per process)


def _log_fallback_once(identity: ModelIdentity, model: Any) -> None:  # Any: a transformers model
    key = identity.model
    if key in _FELL_BACK:
        return
    _FELL_BACK.add(key)
    reason = prefix_sharing_obstacle(model)
    log.info("shared-prefix generation does not apply to this model: whole prompts through model.generate", model=key, reason=reason)


class HFGenerator:
    def __init__(self, loaded: LoadedModel, options: LocalModelOptions, templater: ChatTemplater):
        self._model = loaded.model
        self._tokenizer = loaded.tokenizer
        self._device = loaded.device
        self._identity = loaded.identity
        self._templater = templater
        self._batch_size = options.settled_batch_size()
        self._max_length = options.max_length or model_max_length(self._model.config)
        tokenizer = self._tokenizer
        self._eos_ids = self._stop_token_ids()
        pad = tokenizer.pad_token_id
        self._pad_id = pad if pad is not None else self._eos_ids[0]
        self._share_prefixes = options.prefix_cache and options.shared_generation and shares_prefixes(self._model)
        if options.prefix_cache and options.shared_generation and not self._share_prefixes:
            _log_fallback_once(self._identity, self._model)
        self.prompt_tokens_run = 0  # prompt tokens that went through the model (shared ones once)

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def _stop_token_ids(self) -> list[int]:
        ids: list[int] = []
        configured = getattr(self._model.generation_config, "eos_token_id", None)
        for value in (configured if isinstance(configured, list) else [configured], [self._tokenizer.eos_token_id]):
            ids.extend(v for v in value if v is not None)
        specials = set(self._tokenizer.all_special_tokens) | set(getattr(self._tokenizer, "added_tokens_encoder", {}))
        for token in END_OF_TURN_TOKENS:
            if token in specials:
                ids.append(self._tokenizer.convert_tokens_to_ids(token))
        unique = list(dict.fromkeys(i for i in ids if i is not None and i >= 0))
        return unique or [0]

    def render(self, request: GenerationRequest) -> tuple[str, bool]:
        """The prompt text, and whether it came from the chat template."""
        if request.prompt is not None:
            return request.prompt, False
        messages = request.messages or ()
        if self._templater.has_chat_template:
            return self._templater.render(messages, add_generation_prompt=True), True
        return "\n\n".join(m.content for m in messages) + "\n\n", False

    def _encode(self, text: str, templated: bool) -> list[int]:
        bos = self._tokenizer.bos_token
        # Rendered chat text already holds BOS; plain text gets the tokenizer's usual specials
        # unless it starts with BOS itself (a prompt rendered by the caller).
        add_specials = not templated and not (bos and text.startswith(bos))
        return list(self._tokenizer(text, add_special_tokens=add_specials)["input_ids"])

    def generate(self, requests: Sequence[GenerationRequest], progress: ProgressTask | None = None) -> list[GenerationResult]:
        unique, position, multiplicity = unique_requests(requests)

        encoded = [self._encode(*self.render(r)) for r in unique]
        by_params: dict[GenerationParams, list[int]] = defaultdict(list)
        for i, request in enumerate(unique):
            by_params[request.params].append(i)
        texts: list[str | None] = [None] * len(unique)
        # Replies stored by an interrupted attempt at these requests: their batches are skipped.
        sink, owners, stored = stored_attempt(progress, requests, position)
        for i, result in stored.items():
            texts[i] = result.text
        known = set(stored)
        for params, members in by_params.items():
            shared = self._share_prefixes and resolve_sampling(params, self._model.generation_config) is None
            for batch in self._batches(members, encoded, shared):
                if known and all(i in known for i in batch):
                    continue
                prompts = [encoded[i] for i in batch]
                outputs = self._generate_shared(prompts, params) if shared else self._generate_batch(prompts, params)
                for i, text in zip(batch, outputs):
                    texts[i] = text
                if progress is not None:
                    progress.advance(sum(multiplicity[i] for i in batch))
                if sink is not None:
                    sink.deliver({r: GenerationResult(texts[i]) for i in batch for r in owners[i]})  # type: ignore[arg-type]  # the batch's texts are set
        return [GenerationResult(texts[position[r]]) for r in requests]  # type: ignore[arg-type]  # every text is set by now

    def _batches(self, members: list[int], encoded: list[list[int]], shared: bool) -> list[list[int]]:
        if shared:
            return shared_batches(members, encoded, self._batch_size)
        ordered = sorted(members, key=lambda i: len(encoded[i]), reverse=True)
        return [ordered[start : start + self._batch_size] for start in range(0, len(ordered), self._batch_size)]

    def _fit(self, prompts: list[list[int]], params: GenerationParams) -> list[list[int]]:
        limit = None if self._max_length is None else max(1, self._max_length - params.max_new_tokens)
        if limit is not None and any(len(p) > limit for p in prompts):
            log.warning("prompts longer than the model's context were left-truncated", limit=limit)
            prompts = [p[-limit:] for p in prompts]
        return prompts

    def _generate_shared(self, prompts: list[list[int]], params: GenerationParams) -> list[str]:
        import torch
        from transformers import StopStringCriteria

        prompts = self._fit(prompts, params)
        stops = StopStringCriteria(self._tokenizer, list(params.stop)) if params.stop else None
        # The onnx facade takes 2-D masks and returns its cache: the radix prefill; torch models write one buffer in place.
        run_batch = greedy_generate if getattr(self._model, "takes_custom_masks", False) else buffered_greedy_generate
        with torch.inference_mode():
            replies, run = run_batch(self._model, prompts, params.max_new_tokens, self._eos_ids, self._pad_id, self._device, stops)
        self.prompt_tokens_run += run
        return [self._decode(tokens, params.stop) for tokens in replies]

    def _generate_batch(self, prompts: list[list[int]], params: GenerationParams) -> list[str]:
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        from culturebias.adapters.hf.sampling import request_seed, seeded_sampler

        prompts = self._fit(prompts, params)
        self.prompt_tokens_run += sum(len(p) for p in prompts)
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):  # left padding: every prompt ends at the last column
            ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
            mask[row, width - len(prompt) :] = 1
        sampling = resolve_sampling(params, self._model.generation_config)
        # Sampled rows draw in the seeded sampler (the last processor); decoding itself stays greedy.
        config = GenerationConfig(
            max_new_tokens=params.max_new_tokens,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            pad_token_id=self._pad_id,
            eos_token_id=self._eos_ids,
        )
        extra: dict[str, Any] = {}  # Any: model.generate's arguments
        if params.stop:
            config.stop_strings = list(params.stop)
            extra["tokenizer"] = self._tokenizer
        if sampling is not None:
            config.repetition_penalty = 1.0  # the sampler applies the resolved one, once
            seeds = [request_seed(params.seed, prompt, params) for prompt in prompts]
            extra["logits_processor"] = LogitsProcessorList([seeded_sampler(sampling, seeds)])
        with torch.inference_mode():
            output = self._model.generate(
                input_ids=ids.to(self._device),
                attention_mask=mask.to(self._device),
                generation_config=config,
                **extra,
            )
        new_tokens = output[:, width:].tolist()
        return [self._decode(tokens, params.stop) for tokens in new_tokens]

    def _decode(self, tokens: list[int], stop: Sequence[str]) -> str:
        # Cut at the first end-of-sequence token (rows finished early are padded after it).
        for k, token in enumerate(tokens):
            if token in self._eos_ids:
                tokens = tokens[:k]
                break
        text = self._tokenizer.decode(tokens, skip_special_tokens=True)
        cut = min((text.find(s) for s in stop if s and s in text), default=-1)
        return text[:cut] if cut >= 0 else text
