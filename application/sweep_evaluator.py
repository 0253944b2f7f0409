"""``ports.sweeps.PairEvaluator`` in this process: the pairs come model by model, and one model load serves all
the benchmarks of a model (the previous model's is let go when the next model's pairs begin)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# ``run_evaluation`` of the API: (benchmark, settings, *, out, resume, progress_bar, store, shared_model) -> RunResult.
Evaluate = Callable[..., Any]  # Any: run_evaluation's keyword arguments and result


class ModelByModel:
    """Each pair evaluated with its own settings (``per_pair``); ``new_shared()`` is a fresh shared model load."""

    def __init__(
        self,
        evaluate: Evaluate,
        per_pair: Mapping[tuple[str, str], object],
        progress_bar: bool,
        new_shared: Callable[[], object],
    ):
        self._evaluate = evaluate
        self._per_pair = per_pair
        self._progress_bar = progress_bar
        self._new_shared = new_shared
        self._model: str | None = None
        self._shared = new_shared()

    def __call__(self, model: str, benchmark: str, out: Path, resume: bool) -> str:
        if model != self._model:  # the pairs come model by model; the previous model is let go
            self._model, self._shared = model, self._new_shared()
        settings = self._per_pair[(model, benchmark)]
        return self._evaluate(  # type: ignore[no-any-return]  # run_evaluation's RunResult
            benchmark, settings, out=out, resume=resume, progress_bar=self._progress_bar, shared_model=self._shared
        ).run_id
