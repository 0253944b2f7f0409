"""The forward passes' achieved FLOP/s against a peak measured in the same run (issue 35, point 2).

``ForwardMeter(model)`` hooks the model's decoder (the transformer stack, which every
method calls: the full model's forward, the scorer's split head, lm-eval's ``HFLM``)
and counts, per pass, the matrix-product FLOPs it executes (padding included: what
the hardware did) and the time inside it. A pass over ``T`` positions of ``B`` rows
against ``K`` key columns costs ``2 * B * T * P`` in the layers' weight matrices
(``P``: their parameters) plus ``4 * B * T * K * d * L`` in attention (scores and
the weighted sum; ``d`` the attention width, ``L`` the layers). The output layer is
not counted (it runs on a few positions in the prefill; the scorer's split head
runs it outside the decoder).

``peak_flops(model, threads)`` times the decoder's largest weight matrix applied to
``rows`` positions (``torch.mm``, the same threads), best of several: what this
machine does on this model's own shapes when the product is big enough to run at
full speed. A pass is counted as prefill when it carries at least ``LONG`` positions
a row; decoding steps (with their prompt-lookup drafts) and the scorer's short
continuation rows are the shorter ones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


LONG = 16  # positions a row from which a pass counts as prefill


@dataclass
class Tally:
    passes: int = 0
    flops: float = 0.0
    seconds: float = 0.0
    positions: int = 0  # rows x positions (padding included)

    def add(self, flops: float, seconds: float, positions: int) -> None:
        self.passes += 1
        self.flops += flops
        self.seconds += seconds
        self.positions += positions

    def rate(self) -> float:
        return self.flops / self.seconds if self.seconds else 0.0


@dataclass
class ForwardMeter:
    model: Any  # Any: a transformers model (transformers is read as Any)
    prefill: Tally = field(default_factory=Tally)
    decode: Tally = field(default_factory=Tally)

    def __post_init__(self) -> None:
        import torch

        decoder = self.model.get_decoder() if hasattr(self.model, "get_decoder") else self.model
        config = self.model.config.get_text_config(decoder=True)
        self._weights = sum(m.weight.numel() for m in decoder.modules() if isinstance(m, torch.nn.Linear))
        if not self._weights:  # GPT-2's Conv1D layers
            self._weights = sum(p.numel() for n, p in decoder.named_parameters() if p.dim() == 2 and "wte" not in n and "wpe" not in n and "embed" not in n)
        self._layers = config.num_hidden_layers
        heads = config.num_attention_heads
        self._width = getattr(config, "head_dim", None) and config.head_dim * heads or config.hidden_size
        self._started: list[float] = []
        self._shape: list[tuple[int, int, int]] = []
        decoder.register_forward_pre_hook(self._before, with_kwargs=True)
        decoder.register_forward_hook(self._after, with_kwargs=True)

    def _before(self, module, args, kwargs) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            ids = kwargs["inputs_embeds"]
        rows, length = int(ids.shape[0]), int(ids.shape[1])
        mask = kwargs.get("attention_mask")
        keys = int(mask.shape[-1]) if mask is not None and hasattr(mask, "shape") else length
        self._shape.append((rows, length, keys))
        self._started.append(time.perf_counter())

    def _after(self, module, args, kwargs, output) -> None:
        seconds = time.perf_counter() - self._started.pop()
        rows, length, keys = self._shape.pop()
        flops = 2.0 * rows * length * self._weights + 4.0 * rows * length * keys * self._width * self._layers
        (self.prefill if length >= LONG else self.decode).add(flops, seconds, rows * length)

    def reset(self) -> None:
        self.prefill, self.decode = Tally(), Tally()

    def line(self, peak: float, wall: float | None = None) -> str:
        """Achieved FLOP/s of the prefill and decoding passes, as GFLOP/s and as a share of ``peak``."""
        parts = []
        for name, tally in ((f"passes of >= {LONG} positions a row (prefill)", self.prefill), (f"shorter passes (decoding, drafts, continuations)", self.decode)):
            if tally.passes:
                parts.append(
                    f"{name}: {tally.passes}, {tally.positions:,} positions, {tally.rate() / 1e9:.1f} GFLOP/s ({tally.rate() / peak:.0%} of peak)"
                )
        inside = self.prefill.seconds + self.decode.seconds
        if wall:
            parts.append(f"forward passes {inside / wall:4.0%} of the wall time")
        return "; ".join(parts) or "no forward pass"


def peak_flops(model: Any, rows: int = 512, repeat: int = 20) -> tuple[float, str]:  # Any: a transformers model
    """(FLOP/s, what was timed): the decoder's largest weight matrix on ``rows`` positions, best of ``repeat``."""
    import torch

    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    weights = [p for n, p in decoder.named_parameters() if p.dim() == 2 and "embed" not in n and "wte" not in n and "wpe" not in n]
    weight = max(weights, key=lambda p: p.numel()).detach()
    inner, outer = weight.shape[1], weight.shape[0]
    if weight.shape[0] < weight.shape[1]:  # GPT-2's Conv1D stores [in, out]
        inner, outer = outer, inner
    x = torch.randn(rows, inner, dtype=weight.dtype)
    w = torch.randn(inner, outer, dtype=weight.dtype)
    best = float("inf")
    with torch.inference_mode():
        torch.mm(x, w)
        for _ in range(repeat):
            start = time.perf_counter()
            torch.mm(x, w)
            best = min(best, time.perf_counter() - start)
    return 2.0 * rows * inner * outer / best, f"[{rows} x {inner}] @ [{inner} x {outer}] {weight.dtype}, {torch.get_num_threads()} threads"
