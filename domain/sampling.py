"""How the evaluated model decodes (PROTOCOLS §0.3): ``model.sampling.*``. Greedy unless set.

Three strategies:

- ``greedy`` (default): the argmax token at every step. Nothing else applies and the
  seed does not matter, so a greedy reply is reused under any seed (and by every repeat).
- ``sample``: sampling with the values given here; a value left unset is the model's
  own (hf/onnx: its ``generation_config``, else transformers' defaults; openai: the
  server's default, the parameter is left out of the request).
- ``model``: the model's own default decoding, whether it samples included (McBE's
  run protocol, paper Table 8); a value given here overrides the model's.

``seed`` (default ``run.seed``) seeds sampling; repeat ``i`` of ``run.repeats`` samples
with ``seed + i``. The application asks ``SamplingSettings.params`` for a request's
``GenerationParams``; the judge keeps its own greedy parameters.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from culturebias.domain.requests import GenerationParams, SamplingStrategy

# How a protocol asks for one of its generations: as the run decodes, always greedy (e.g. an
# answer after sampled reasoning), or sampled even in a greedy run (a protocol that samples by definition).
Decoding = Literal["run", "greedy", "sampled"]

_SAMPLING_KEYS = ("temperature", "top_p", "top_k", "repetition_penalty")


class SamplingSettings(BaseModel):
    """``model.sampling.strategy``, ``temperature``, ``top_p``, ``top_k``, ``repetition_penalty``, ``seed``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # greedy; sample; or model: the model's own default decoding, whether it samples included (hf/onnx: its
    # generation_config; openai: the server's defaults).
    strategy: SamplingStrategy = "greedy"
    # Sampling values; one left unset is the model's own. Setting one alone means strategy=sample.
    temperature: float | None = Field(None, ge=0, le=100)
    top_p: float | None = Field(None, gt=0, le=1)  # nucleus sampling: the smallest set of tokens holding this probability
    top_k: int | None = Field(None, ge=0)  # 0: no top-k cut
    repetition_penalty: float | None = Field(None, gt=0)  # above 1 makes repeating a token less likely
    seed: int | None = None  # None: run.seed

    @model_validator(mode="before")
    @classmethod
    def _sampling_values_imply_sampling(cls, values: object) -> object:
        # ``--set model.sampling.temperature=0.7`` alone means "sample at 0.7".
        if isinstance(values, dict) and "strategy" not in values:
            given = {k: values[k] for k in _SAMPLING_KEYS if values.get(k) is not None}
            if given and not (set(given) == {"temperature"} and _is_zero(given["temperature"])):
                return {**values, "strategy": "sample"}
        return values

    @model_validator(mode="after")
    def _consistent(self) -> "SamplingSettings":
        given = [k for k in _SAMPLING_KEYS if getattr(self, k) is not None]
        if self.strategy == "greedy":
            extra = [k for k in given if not (k == "temperature" and self.temperature == 0)]
            if extra:
                raise ValueError(
                    f"{extra[0]} applies to sampling, and strategy is greedy: set strategy=sample (or model), or drop {extra[0]}"
                )
        elif self.temperature == 0:
            raise ValueError(f"temperature=0 is greedy decoding, and strategy is {self.strategy}: set strategy=greedy or a temperature > 0")
        return self

    @property
    def greedy(self) -> bool:
        return self.strategy == "greedy"

    def seed_for(self, run_seed: int, repeat: int = 0) -> int:
        """The sampling seed of repeat ``repeat`` (0-based): ``seed`` (else ``run.seed``) + ``repeat``."""
        return (run_seed if self.seed is None else self.seed) + repeat

    def params(
        self, max_new_tokens: int, *, seed: int, stop: tuple[str, ...] = (), decoding: Decoding = "run"
    ) -> GenerationParams:
        """One request's parameters. Greedy ones are exactly those of a run before sampling existed."""
        chosen = self
        if decoding == "greedy":
            chosen = SamplingSettings()
        elif decoding == "sampled" and self.strategy != "sample":
            # It samples whatever the model's own default is; values given here still apply.
            temperature = None if self.temperature == 0 else self.temperature  # 0 is greedy's, not a value
            chosen = self.model_copy(update={"strategy": "sample", "temperature": temperature})
        if chosen.greedy:
            return GenerationParams(max_new_tokens=max_new_tokens, temperature=0.0, top_p=1.0, seed=0, stop=tuple(stop))
        return GenerationParams(
            max_new_tokens=max_new_tokens,
            temperature=chosen.temperature,
            top_p=chosen.top_p,
            top_k=chosen.top_k,
            repetition_penalty=chosen.repetition_penalty,
            seed=seed,
            stop=tuple(stop),
            strategy=chosen.strategy,
        )

    def describe(self) -> str:
        """``greedy``, or ``sample (temperature=0.7, top_p=the model's, ...)``: how a report names it."""
        if self.greedy:
            return "greedy"
        values = ", ".join(f"{k}={_shown(getattr(self, k))}" for k in _SAMPLING_KEYS)
        return f"{self.strategy} ({values})"


def _shown(value: float | int | None) -> str:
    return "the model's" if value is None else str(value)


def _is_zero(value: Any) -> bool:  # a raw setting of any type: float() decides
    try:
        return float(value) == 0
    except (TypeError, ValueError):
        return False  # not a number: the field's own validation names it
