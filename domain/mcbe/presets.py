"""McBE's named presets (``--preset``)."""

from __future__ import annotations

from culturebias.domain.presets import Preset

PRESETS: tuple[Preset, ...] = (
    Preset(
        name="mcbe-paper",
        description="McBE's run protocol: four runs, each with the model's own default sampling "
        "(hf: its generation_config); every score (task × category, task, overall) is reported as mean ± std "
        "over the runs (metrics.repeat_means), and compare compares models on the means",
        source="PROTOCOLS §3 run protocol; McBE paper Appendix F, Table 8",
        benchmarks=("mcbe",),
        settings={"model": {"sampling": {"strategy": "model"}}, "run": {"repeats": 4}},
    ),
)
