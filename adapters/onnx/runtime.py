"""ONNX Runtime sessions behind the call signature of a transformers model.

``OrtCausalLM`` answers ``model(input_ids=..., attention_mask=..., position_ids=...,
past_key_values=..., use_cache=..., logits_to_keep=...)`` with ``.logits`` and a
transformers ``DynamicCache``, and ``OrtMaskedLM`` answers ``model(**inputs).logits``.
The causal graph takes a 4-D additive attention mask, so the custom masks of the
hf scorer's token trees run on ONNX Runtime as they do on torch (sdpa or eager).
The hf adapter's scorers therefore run unchanged on top of them: tokenisation,
boundary rule, batching and shared-prefix reuse are the hf adapter's own code,
and only the forward passes move to ONNX Runtime. Where the export holds a
scoring head, ``OrtScoringHead`` hands the scorer's (position, target) pairs to
the graph, which returns their log-probabilities: the ``[b,t,v]`` logits stay
inside ONNX Runtime.
Tensors stay torch tensors on the CPU (zero-copy to and from numpy). The hf
generator's ``model.generate`` is transformers' own ``GenerationMixin.generate``
driving this facade, so logits processors, sampling and stop strings behave
exactly as with torch.

On CUDA the session runs with IO binding: inputs are copied to the device once
as OrtValues and outputs are allocated by ONNX Runtime on the device, then read
back, so no intermediate host buffers are created per run.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from culturebias.adapters.onnx.graph_inputs import SCORE_INPUTS, additive_mask


class SessionRunner:
    """Runs one InferenceSession: plain numpy feeds on the CPU, IO binding on CUDA."""

    def __init__(self, session: Any, device: str):  # Any: an onnxruntime InferenceSession
        self.session = session
        self.device = device
        self.output_names = [o.name for o in session.get_outputs()]
        self._device_id = int(device.split(":", 1)[1]) if device.startswith("cuda:") else 0

    @property
    def on_cuda(self) -> bool:
        return self.device.startswith("cuda")

    def run(self, feeds: dict[str, np.ndarray], outputs: list[str] | None = None) -> dict[str, np.ndarray]:
        names = outputs or self.output_names
        if not self.on_cuda:
            return dict(zip(names, self.session.run(names, feeds)))
        return self._run_bound(feeds, names)

    def _run_bound(self, feeds: dict[str, np.ndarray], names: list[str]) -> dict[str, np.ndarray]:
        import onnxruntime as ort

        binding = self.session.io_binding()
        held = []  # the device copies must outlive the run
        for name, array in feeds.items():
            value = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array), "cuda", self._device_id)
            held.append(value)
            binding.bind_ortvalue_input(name, value)
        for name in names:
            binding.bind_output(name, "cuda", self._device_id)
        self.session.run_with_iobinding(binding)
        return dict(zip(names, binding.copy_outputs_to_cpu()))


class _OutputEmbeddings:
    """What ``model.get_output_embeddings()`` is asked for: the vocabulary size."""

    def __init__(self, vocab: int, hidden: int):
        self.weight = SimpleNamespace(shape=(vocab, hidden))


def _generative_base():
    from transformers import GenerationMixin, PreTrainedModel

    return PreTrainedModel, GenerationMixin


class OrtCausalLM(*_generative_base()):  # type: ignore[misc]  # transformers' bases, imported when the class is made
    """A causal LM facade without torch weights; ``generate`` is transformers' own (processors, sampling, stops)."""

    main_input_name = "input_ids"
    _supports_cache_class = True
    takes_custom_masks = True  # the graph takes any 2-D mask (holes too): the hf generator shares prompt prefixes

    def __init__(self, runner: SessionRunner, config: Any, meta: dict[str, Any], generation_config: Any = None):  # Any: transformers config objects; the export's JSON metadata
        super().__init__(config)
        if generation_config is not None:
            self.generation_config = generation_config
        self.runner = runner
        self.meta = meta
        self._kv = [tuple(shape) for shape in meta["kv_shapes"]]
        self._float = np.float16 if meta.get("dtype") == "float16" else np.float32
        self._past_names = [name for name in meta["inputs"] if name.startswith("past.")]
        self._present_names = [name for name in meta["outputs"] if name.startswith("present.")]
        self._scores = bool(meta.get("score_head"))

    @property
    def device(self):
        import torch

        return torch.device("cpu")  # where the tensors this object takes and returns live

    @property
    def dtype(self):
        import torch

        return torch.float16 if self._float == np.float16 else torch.float32

    @classmethod
    def can_generate(cls) -> bool:
        return True

    def get_output_embeddings(self) -> _OutputEmbeddings:
        return _OutputEmbeddings(self.meta["vocab"], getattr(self.config, "hidden_size", 0))

    def eval(self) -> "OrtCausalLM":
        return self

    def __call__(self, **kwargs: Any):  # Any: a transformers forward's arguments
        return self.forward(**kwargs)

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        position_ids=None,
        past_key_values=None,
        use_cache: bool | None = None,
        logits_to_keep: Any = 0,  # Any: an int or a tensor, as transformers passes it
        cache=None,
        **unused: Any,  # Any: arguments transformers passes and the session ignores
    ):
        import torch
        from transformers.modeling_outputs import CausalLMOutputWithPast

        # transformers renamed the key/value cache from past_key_values to cache (5.2x): generate() passes and
        # reads whichever its version knows, so both are taken and the output fills the field it has.
        past = cache if cache is not None else past_key_values
        feeds = self._feeds(input_ids, attention_mask, position_ids, past)
        feeds["logit_positions"] = _kept_positions(logits_to_keep, input_ids.shape[1])
        wanted = ["logits", *self._present_names] if use_cache else ["logits"]
        out = self.runner.run(feeds, wanted)
        present = self._cache(out) if use_cache else None
        field = "cache" if "cache" in getattr(CausalLMOutputWithPast, "__dataclass_fields__", {}) else "past_key_values"
        return CausalLMOutputWithPast(logits=torch.from_numpy(out["logits"]), **{field: present})

    def scoring_head(self, allow_split: bool = True):
        """The head inside the graph, where the export has one (the hf scorer asks for it)."""
        return OrtScoringHead(self) if self._scores and allow_split else None

    def score_tokens(self, parents, targets, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None, cache=None, **unused: Any):  # Any: arguments the session ignores
        """(float64 log-probabilities, greedy flags) of ``targets`` predicted at flat positions ``parents``, in one session run."""
        import torch

        if len(parents) == 0:
            return torch.zeros(0, dtype=torch.float64), torch.zeros(0, dtype=torch.bool)
        needed, rows = torch.unique(parents, return_inverse=True)
        feeds = self._feeds(input_ids, attention_mask, position_ids, cache if cache is not None else past_key_values)
        feeds["logit_positions"] = np.zeros(0, dtype=np.int64)
        scoring = (needed, rows, targets)  # in the order of SCORE_INPUTS
        feeds.update({name: t.cpu().numpy().astype(np.int64).reshape(-1) for name, t in zip(SCORE_INPUTS, scoring)})
        out = self.runner.run(feeds, ["score_logprobs", "score_greedy"])
        return torch.from_numpy(out["score_logprobs"]).double(), torch.from_numpy(out["score_greedy"])

    def _feeds(self, input_ids, attention_mask, position_ids, past_key_values) -> dict[str, np.ndarray]:
        batch, length = input_ids.shape
        if past_key_values is not None and past_key_values.get_seq_length() > 0:
            past = [t for layer in past_key_values.layers for t in (layer.keys, layer.values)]
            past_arrays = [t.detach().cpu().numpy().astype(self._float, copy=False) for t in past]
        else:
            past_arrays = [np.zeros((batch, h, 0, d), dtype=self._float) for h, d in self._kv for _ in range(2)]
        past_length = past_arrays[0].shape[2]
        if attention_mask is None:
            mask = np.ones((batch, past_length + length), dtype=np.int64)
        else:
            mask = attention_mask.detach().cpu().numpy()
        if position_ids is None:
            positions = np.broadcast_to(np.arange(past_length, past_length + length, dtype=np.int64), (batch, length))
        else:
            positions = position_ids.detach().cpu().numpy().astype(np.int64, copy=False)
        feeds = {
            "input_ids": input_ids.detach().cpu().numpy().astype(np.int64, copy=False),
            "attention_mask": additive_mask(mask, past_length, length, self._float),
            "position_ids": np.ascontiguousarray(positions),
        }
        if self._scores:  # a plain forward pass scores one token, position 0 (ONNX Runtime's reductions reject empty inputs)
            feeds.update({name: np.zeros(1, dtype=np.int64) for name in SCORE_INPUTS})
        feeds.update(zip(self._past_names, past_arrays))
        return feeds

    def _cache(self, out: dict[str, np.ndarray]):
        import torch
        from transformers import DynamicCache

        presents = [torch.from_numpy(out[name]) for name in self._present_names]
        return DynamicCache([(presents[2 * i], presents[2 * i + 1]) for i in range(len(self._kv))])


class OrtScoringHead:
    """The hf scorer's head interface over the graph's own scoring outputs."""

    split = True

    def __init__(self, model: OrtCausalLM):
        self._model = model

    def prefix(self, **kwargs: Any):  # Any: a transformers forward's arguments
        import torch

        kwargs["logits_to_keep"] = torch.zeros(0, dtype=torch.long)  # no logits: only the cache is wanted
        return self._model(**kwargs).past_key_values

    def score(self, parents, targets, **kwargs: Any):  # Any: a transformers forward's arguments
        return self._model.score_tokens(parents, targets, **kwargs)


def _kept_positions(logits_to_keep: Any, length: int) -> np.ndarray:  # Any: an int or a tensor, as transformers passes it
    """transformers' ``logits_to_keep``: 0 = all, n = the last n, a 1-D tensor = those positions."""
    if isinstance(logits_to_keep, int):
        first = 0 if logits_to_keep <= 0 else max(0, length - logits_to_keep)
        return np.arange(first, length, dtype=np.int64)
    return logits_to_keep.detach().cpu().numpy().astype(np.int64).reshape(-1)


class OrtMaskedLM:
    def __init__(self, runner: SessionRunner, config: Any, meta: dict[str, Any]):  # Any: a transformers config; the export's JSON metadata
        self.runner = runner
        self.config = config
        self.meta = meta
        self.device = "cpu"

    def eval(self) -> "OrtMaskedLM":
        return self

    def parameters(self):
        return iter(())

    def __call__(self, **inputs: Any):  # Any: a transformers forward's arguments
        import torch
        from transformers.modeling_outputs import MaskedLMOutput

        feeds = {
            name: inputs[name].detach().cpu().numpy().astype(np.int64, copy=False)
            for name in self.meta["inputs"]
            if name in inputs
        }
        if "token_type_ids" in self.meta["inputs"] and "token_type_ids" not in feeds:
            feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
        logits = self.runner.run(feeds, ["logits"])["logits"]
        return MaskedLMOutput(logits=torch.from_numpy(logits))
