"""Export a transformers model to ONNX once, cached on disk by model and opset.

Exporter: ``torch.onnx.export(..., dynamo=False)`` (the TorchScript tracer).
``optimum`` would pin transformers 4.x (``pip install --dry-run optimum[onnx]``
wants transformers 4.57 in place of our 5.x), and the torch.export-based
exporter needs ``onnxscript``, an extra dependency, and takes ~25× longer on the
tiny test models. The tracer records one execution, so the wrapper below keeps
every input a tensor, traces with a padded attention mask and a non-empty past
(the general code paths), and the export is checked against the torch model on
a second input shape before it is cached.

Causal LM graph (one graph serves scoring, prefix reuse and generation):
inputs ``input_ids [b,t]``, ``attention_mask [b,1,t,p+t]`` (additive: 0 or the
dtype's minimum; token trees need masks that are not causal), ``position_ids [b,t]``,
``logit_positions [k]`` (which positions get logits: the scorer needs only the
scored ones, generation only the last), ``past.<i>.key|value [b,h,p,d]`` with
``p >= 0``; outputs ``logits [b,k,v]`` and ``present.<i>.key|value [b,h,p+t,d]``.
Where the model's logits are the output embedding of its decoder's states (the
hf scorer's split-head probe), the graph also scores next tokens itself:
``score_positions [m]`` (flat ``row * t + column`` positions), ``score_rows [n]``
(which of those predicts each target) and ``score_targets [n]`` give
``score_logprobs [n]`` (log-softmax over the vocabulary) and ``score_greedy [n]``,
so a scoring run never moves ``[b,t,v]`` logits out of ONNX Runtime.
Masked LM graph: ``input_ids``, ``attention_mask`` (and ``token_type_ids`` where
the model has them) to ``logits``.

Cache folder: ``<cache_dir>/onnx/<model>-<key>/`` with ``model.onnx`` and
``export.json`` (no pickle); the key covers the model's name, revision, weight
files (name, size, mtime), tokenizer fingerprint, kind, dtype, opset and the
torch/transformers versions. Written to a temporary folder, then renamed.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from culturebias.logs import get_logger

from culturebias.adapters.onnx.graph_inputs import SCORE_INPUTS, additive_mask
from culturebias.domain.errors import ConfigError
from culturebias.domain.fingerprint import fingerprint

if TYPE_CHECKING:
    import torch

    from culturebias.adapters.hf.loading import ModelSource

log = get_logger("culturebias.onnx")

OPSET = 17
EXPORT_VERSION = "4"  # 2: 4-D additive attention mask; 3: traced with eager attention; 4: scoring head in the graph
META_FILE = "export.json"
MODEL_FILE = "model.onnx"
# The export check: ONNX Runtime's logits against torch's, relative to the logits' scale, per dtype.
CHECK_TOLERANCE = {"float32": 1e-4, "float16": 2e-2}
SCORE_OUTPUTS = ["score_logprobs", "score_greedy"]


@dataclass(frozen=True)
class ExportedModel:
    folder: Path
    meta: dict[str, Any]  # Any: the export's JSON metadata

    @property
    def model_file(self) -> Path:
        return self.folder / MODEL_FILE


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _local_files(location: str) -> list[list[Any]]:  # Any: JSON rows (name, size, mtime)
    folder = Path(location)
    if not folder.is_dir():
        return []
    return sorted(
        [p.relative_to(folder).as_posix(), p.stat().st_size, p.stat().st_mtime_ns]
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    )


def export_key(source: ModelSource, tokenizer_fp: str, kind: str, dtype: str, opset: int = OPSET) -> str:
    return fingerprint(
        {
            "model": source.name,
            "revision": source.revision,
            "files": _local_files(source.location) if source.is_local else [],
            "tokenizer": tokenizer_fp,
            "kind": kind,
            "dtype": dtype,
            "opset": opset,
            "export": EXPORT_VERSION,
            "torch": _version("torch"),
            "transformers": _version("transformers"),
        }
    )


def export_folder(cache_dir: Path, source: ModelSource, key: str) -> Path:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(source.name).name or "model")[-60:]
    return Path(cache_dir) / "onnx" / f"{stem}-{key}"


def load_exported(folder: Path) -> ExportedModel | None:
    meta_path = folder / META_FILE
    if not meta_path.is_file() or not (folder / MODEL_FILE).is_file():
        return None
    return ExportedModel(folder, json.loads(meta_path.read_text(encoding="utf-8")))


def ensure_exported(folder: Path, kind: str, load_torch_model, opset: int = OPSET) -> ExportedModel:
    """The cached export in ``folder``, exporting ``load_torch_model()`` first when there is none."""
    cached = load_exported(folder)
    if cached is not None:
        log.info("onnx export found", folder=str(folder))
        return cached
    model = load_torch_model()
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        log.info("exporting to onnx", kind=kind, opset=opset, folder=str(folder))
        exporter = _export_causal if kind == "causal" else _export_masked
        meta = exporter(model, staging / MODEL_FILE, opset)
        meta.update({"kind": kind, "opset": opset, "export_version": EXPORT_VERSION})
        meta["parameters"] = int(sum(p.numel() for p in model.parameters()))
        (staging / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
        try:
            os.rename(staging, folder)
        except OSError:  # another process finished first, or a stale half-written folder
            if load_exported(folder) is None:
                shutil.rmtree(folder, ignore_errors=True)
                os.rename(staging, folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    exported = load_exported(folder)
    assert exported is not None
    return exported


# --------------------------------------------------------------------------- causal


def _causal_graph(model: Any, n_layers: int, score_head: bool):  # Any: a transformers model
    import torch
    from transformers import DynamicCache

    decoder = model.get_decoder() if score_head else None
    embedding = model.get_output_embeddings() if score_head else None
    vocab = int(model.get_output_embeddings().weight.shape[0])

    class CausalLMGraph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, position_ids, logit_positions, *rest):
            past = rest[3:] if score_head else rest
            cache = DynamicCache([(past[2 * i], past[2 * i + 1]) for i in range(n_layers)])
            arguments = dict(
                input_ids=input_ids,
                attention_mask=attention_mask,
                position_ids=position_ids,
                past_key_values=cache,
                use_cache=True,
            )
            if not score_head:
                out = self.model(**arguments, logits_to_keep=logit_positions)
                return (out.logits, *_flat_cache(out.past_key_values))
            score_positions, score_rows, score_targets = rest[:3]
            out = decoder(**arguments)
            hidden = out.last_hidden_state
            logits = embedding(hidden[:, logit_positions])
            head = embedding(hidden.reshape(-1, hidden.shape[-1])[score_positions]).float()
            top = head.max(dim=-1).values
            # Spelled out: ONNX Runtime's ReduceLogSumExp loses ~1e-4 against torch on SmolLM2's logits.
            lse = top + torch.log(torch.exp(head - top[:, None]).sum(dim=-1))
            picked = head.reshape(-1)[score_rows * vocab + score_targets]
            return (logits, picked - lse[score_rows], picked >= top[score_rows], *_flat_cache(out.past_key_values))

    return CausalLMGraph().eval()


def _flat_cache(cache: Any) -> list[torch.Tensor]:  # Any: a transformers Cache (its class varies by version)
    flat: list[torch.Tensor] = []
    for layer in cache.layers:
        flat.extend((layer.keys, layer.values))
    return flat


def causal_names(n_layers: int, score_head: bool = False) -> tuple[list[str], list[str]]:
    past = [f"past.{i}.{part}" for i in range(n_layers) for part in ("key", "value")]
    present = [f"present.{i}.{part}" for i in range(n_layers) for part in ("key", "value")]
    scoring_in = SCORE_INPUTS if score_head else []
    scoring_out = SCORE_OUTPUTS if score_head else []
    return ["input_ids", "attention_mask", "position_ids", "logit_positions", *scoring_in, *past], ["logits", *scoring_out, *present]


def _kv_shapes(model: Any) -> list[tuple[int, int]]:  # Any: a transformers model
    """(heads, head_dim) of every layer's key/value cache, read from one real forward pass."""
    import torch

    with torch.inference_mode():
        cache = model(input_ids=torch.zeros((1, 1), dtype=torch.long), use_cache=True).past_key_values
    return [(int(layer.keys.shape[1]), int(layer.keys.shape[3])) for layer in cache.layers]


def _causal_inputs(model: Any, kv: list[tuple[int, int]], batch: int, length: int, past_length: int, vocab: int, seed: int):  # Any: a transformers model
    """Feeds with a left-padded first row, so that the traced attention-mask code is the general one.

    The past is computed by the model itself from random prefix tokens (empty when ``past_length`` is 0).
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    low = min(5, vocab - 1)
    ids = torch.randint(low, vocab, (batch, past_length + length), generator=generator)
    mask = torch.ones((batch, past_length + length), dtype=torch.long)
    mask[0, :2] = 0
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
    dtype = next(model.parameters()).dtype
    if past_length:
        with torch.inference_mode():
            prior = model(
                input_ids=ids[:, :past_length],
                attention_mask=mask[:, :past_length],
                position_ids=positions[:, :past_length],
                use_cache=True,
            ).past_key_values
        past = [t.detach().clone() for layer in prior.layers for t in (layer.keys, layer.values)]
    else:
        past = [torch.zeros((batch, h, 0, d), dtype=dtype) for h, d in kv for _ in range(2)]
    keep = torch.arange(length, dtype=torch.long)
    return ids, mask, positions, keep, past


def _tolerance(model: Any) -> float:  # Any: a transformers model
    return CHECK_TOLERANCE[str(next(model.parameters()).dtype).removeprefix("torch.")]


def _mask4d(model: Any, mask, past_length: int, length: int):  # Any: a transformers model
    import torch

    dtype = torch.empty((), dtype=next(model.parameters()).dtype).numpy().dtype
    return torch.from_numpy(additive_mask(mask.numpy(), past_length, length, dtype))


def _score_probe(batch: int, length: int, vocab: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Score inputs over every position of a ``batch x length`` input, two targets at the first position."""
    import torch

    generator = torch.Generator().manual_seed(seed + 1)
    positions = torch.arange(batch * length, dtype=torch.long)
    rows = torch.cat([torch.zeros(1, dtype=torch.long), positions])
    targets = torch.randint(0, vocab, (len(rows),), generator=generator)
    return positions, rows, targets


def _export_causal(model: Any, target: Path, opset: int) -> dict[str, Any]:  # Any: a transformers model; JSON metadata
    import torch

    from culturebias.adapters.hf.scoring_head import SplitHead, scoring_head

    vocab = int(model.get_output_embeddings().weight.shape[0])
    kv = _kv_shapes(model)
    n_layers = len(kv)
    score_head = isinstance(scoring_head(model), SplitHead)
    ids, mask, positions, keep, past = _causal_inputs(model, kv, 2, 3, 2, vocab, seed=0)
    scoring = _score_probe(2, 3, vocab, seed=0) if score_head else ()
    probe = (ids[:, 2:], _mask4d(model, mask, 2, 3), positions[:, 2:], keep, *scoring, *past)
    graph = _causal_graph(model, n_layers, score_head)
    inputs, outputs = causal_names(n_layers, score_head)
    axes: dict[str, dict[int, str]] = {
        "input_ids": {0: "batch", 1: "length"},
        "attention_mask": {0: "batch", 2: "length", 3: "total_length"},
        "position_ids": {0: "batch", 1: "length"},
        "logit_positions": {0: "kept"},
        "logits": {0: "batch", 1: "kept"},
        "score_positions": {0: "scored_positions"},
        "score_rows": {0: "scored"},
        "score_targets": {0: "scored"},
        "score_logprobs": {0: "scored"},
        "score_greedy": {0: "scored"},
    }
    for name in inputs:
        if name.startswith("past."):
            axes[name] = {0: "batch", 2: "past_length"}
    for name in outputs:
        if name.startswith("present."):
            axes[name] = {0: "batch", 2: "total_length"}
    axes = {name: axis for name, axis in axes.items() if name in inputs or name in outputs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about python-side shape checks; the check below guards
        with torch.no_grad():
            torch.onnx.export(
                graph,
                probe,
                str(target),
                input_names=inputs,
                output_names=outputs,
                dynamic_axes=axes,
                opset_version=opset,
                dynamo=False,
                do_constant_folding=True,
            )
    _check_causal(model, target, kv, vocab, score_head)
    return {
        "n_layers": n_layers,
        "vocab": vocab,
        "kv_shapes": [list(shape) for shape in kv],
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "inputs": inputs,
        "outputs": outputs,
        "score_head": score_head,
        "architecture": type(model).__name__,
    }


def _check_causal(model: Any, target: Path, kv: list[tuple[int, int]], vocab: int, score_head: bool) -> None:  # Any: a transformers model
    """ONNX Runtime must reproduce torch on shapes the trace did not see: no past, and one-token decoding."""
    import numpy as np
    import onnxruntime as ort
    import torch

    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    past_names = [i.name for i in session.get_inputs() if i.name.startswith("past.")]
    for batch, length, past_length in ((3, 5, 0), (2, 1, 4)):
        ids, mask, positions, keep, past = _causal_inputs(model, kv, batch, length, past_length, vocab, seed=batch)
        feed = {
            "input_ids": ids[:, past_length:].numpy(),
            "attention_mask": _mask4d(model, mask, past_length, length).numpy(),
            "position_ids": positions[:, past_length:].numpy(),
            "logit_positions": keep.numpy(),
        }
        probe = _score_probe(batch, length, vocab, seed=batch) if score_head else None
        scoring = probe or ()
        feed.update(zip(SCORE_INPUTS, (t.numpy() for t in scoring)))
        feed.update({name: t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy() for name, t in zip(past_names, past)})
        wanted = ["logits", *SCORE_OUTPUTS] if score_head else ["logits"]
        got = dict(zip(wanted, session.run(wanted, feed)))
        with torch.inference_mode():
            want = model(input_ids=ids, attention_mask=mask, position_ids=positions).logits[:, past_length:].float()
        real = mask[:, past_length:].numpy().astype(bool)
        if not real.any():
            continue
        scale = float(want.abs().max()) or 1.0
        _require_close(model, "logit", np.abs(got["logits"].astype(np.float32) - want.numpy())[real], scale, batch, length, past_length)
        if probe is not None:  # score_head
            _, rows, targets = probe
            flat = want.reshape(-1, vocab)
            expected = torch.log_softmax(flat.double(), dim=-1)[rows, targets]
            keep_rows = torch.from_numpy(real.reshape(-1))[rows].numpy()
            diff = np.abs(got["score_logprobs"].astype(np.float64) - expected.numpy())[keep_rows]
            _require_close(model, "log-probability", diff, scale, batch, length, past_length)
            greedy = (flat[rows].argmax(dim=-1) == targets).numpy()
            if not bool(np.all(got["score_greedy"][keep_rows] | ~greedy[keep_rows])):
                raise ConfigError(f"the ONNX export of {type(model).__name__} misses a greedy token in its scoring head")


def _require_close(model: Any, what: str, diff, scale: float, batch: int, length: int, past_length: int) -> None:  # Any: a transformers model
    worst = float(diff.max()) if diff.size else 0.0
    if not worst <= _tolerance(model) * scale:
        raise ConfigError(
            f"the ONNX export of {type(model).__name__} does not reproduce the torch model "
            f"(max {what} difference {worst:.3g} with batch {batch}, length {length}, past {past_length})"
        )


# --------------------------------------------------------------------------- masked


def _export_masked(model: Any, target: Path, opset: int) -> dict[str, Any]:  # Any: a transformers model; JSON metadata
    import torch

    config = model.config
    uses_types = "token_type_ids" in inspect.signature(model.forward).parameters and bool(getattr(config, "type_vocab_size", 0))

    class MaskedLMGraph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, *rest):
            kwargs = {"token_type_ids": rest[0]} if rest else {}
            return self.model(input_ids=input_ids, attention_mask=attention_mask, **kwargs).logits

    vocab = int(config.vocab_size)
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(min(5, vocab - 1), vocab, (2, 6), generator=generator)
    mask = torch.ones_like(ids)
    mask[0, -2:] = 0
    inputs = ["input_ids", "attention_mask"] + (["token_type_ids"] if uses_types else [])
    probe = (ids, mask) + ((torch.zeros_like(ids),) if uses_types else ())
    axes = {name: {0: "batch", 1: "length"} for name in inputs}
    axes["logits"] = {0: "batch", 1: "length"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(
                MaskedLMGraph().eval(),
                probe,
                str(target),
                input_names=inputs,
                output_names=["logits"],
                dynamic_axes=axes,
                opset_version=opset,
                dynamo=False,
            )
    _check_masked(model, target, inputs, vocab)
    return {
        "vocab": vocab,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "inputs": inputs,
        "outputs": ["logits"],
        "architecture": type(model).__name__,
    }


def _check_masked(model: Any, target: Path, inputs: list[str], vocab: int) -> None:  # Any: a transformers model
    import numpy as np
    import onnxruntime as ort
    import torch

    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(min(5, vocab - 1), vocab, (3, 9), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, -3:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    got = session.run(["logits"], {k: feeds[k].numpy() for k in inputs})[0]
    with torch.inference_mode():
        want = model(**{k: feeds[k] for k in inputs}).logits.float().numpy()
    real = mask.numpy().astype(bool)
    diff = float(np.abs(got - want)[real].max())
    if not diff <= _tolerance(model) * (float(np.abs(want).max()) or 1.0):
        raise ConfigError(f"the ONNX export of {type(model).__name__} does not reproduce the torch model (max logit difference {diff:.3g})")
