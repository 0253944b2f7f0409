"""Named presets: a paper's protocol as one typed overlay of settings (``--preset NAME``).

A preset is a set of ``key=value`` settings laid over the configuration before the
command line's ``--set`` (which still wins over it), and it names the benchmarks it
is for; ``culturebias list`` and ``culturebias run --help`` list them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from culturebias.domain.errors import ConfigError, UnknownNameError


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    source: str  # where the protocol is written down
    benchmarks: tuple[str, ...]  # a run must include one of them
    settings: dict[str, Any]  # nested like the TOML file: {"run": {"repeats": 4}}

    def assignments(self) -> list[str]:
        """The overlay as ``--set`` assignments (``run.repeats=4``), in a stable order."""
        return [f"{key}={_text(value)}" for key, value in _flatten(self.settings)]


def _flatten(values: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in values.items():
        if isinstance(value, dict):
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            name="mcbe-paper",
            description="McBE's run protocol: four runs, each with the model's own default sampling "
            "(hf: its generation_config); the summary reports mean ± std over the runs",
            source="PROTOCOLS §3 run protocol; McBE paper Appendix F, Table 8",
            benchmarks=("mcbe",),
            settings={"model": {"sampling": {"strategy": "model"}}, "run": {"repeats": 4}},
        ),
        Preset(
            name="cbbq-cot-sampled",
            description="CBBQ's Q+IF+CoT condition with sampled reasoning (the model's own sampling values "
            "unless model.sampling sets them); the answer turn decodes as model.sampling says (greedy by default)",
            source="PROTOCOLS §2 CBBQ prompt conditions",
            benchmarks=("cbbq",),
            settings={"protocol": {"cbbq": {"condition": ["q_if_cot"], "reasoning_decoding": "sampled"}}},
        ),
    )
}


def preset(name: str) -> Preset:
    found = PRESETS.get(name)
    if found is None:
        raise UnknownNameError("preset", name, list(PRESETS))
    return found


def preset_assignments(names: list[str], benchmarks: list[str]) -> list[str]:
    """The ``--set`` assignments of the presets named, each checked to be for one of ``benchmarks``."""
    out: list[str] = []
    for name in names:
        chosen = preset(name)
        if not set(chosen.benchmarks) & set(benchmarks):
            raise ConfigError(
                f"preset {name} is for {', '.join(chosen.benchmarks)}; this run is of {', '.join(benchmarks)}"
            )
        out += chosen.assignments()
    return out


def presets_text() -> str:
    lines = ["presets (--preset NAME; --set wins over a preset's values):"]
    for p in PRESETS.values():
        lines.append(f"  {p.name:<18} for {', '.join(p.benchmarks)}: {p.description} [{p.source}]")
        lines.append(f"  {'':<18} sets {' '.join(p.assignments())}")
    return "\n".join(lines)
