"""CBBQ's named presets (``--preset``)."""

from __future__ import annotations

from culturebias.domain.presets import Preset

PRESETS: tuple[Preset, ...] = (
    Preset(
        name="cbbq-cot-sampled",
        description="CBBQ's Q+IF+CoT condition with sampled reasoning (the model's own sampling values "
        "unless model.sampling sets them); the answer turn decodes as model.sampling says (greedy by default)",
        source="PROTOCOLS §2 CBBQ prompt conditions",
        benchmarks=("cbbq",),
        settings={"protocol": {"cbbq": {"condition": ["q_if_cot"], "reasoning_decoding": "sampled"}}},
    ),
)
