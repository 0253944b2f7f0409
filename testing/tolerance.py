"""How closely a number must match its reference: exact, or within the tolerance of a model's float dtype.

Two kinds of numbers (docs/notes/tests.md, "Which numbers are exact"):

* **Exact** (``EXACT``, 1e-12 absolute or relative): everything computed from stored or
  replayed values (a replay file's answers, released PPLs, scripted doubles) and from
  counts. The same float64 arithmetic gives the same bits on every CPU, so 1e-12 only
  absorbs a last-bit change of order in ``numpy``/``scipy`` reductions.
* **Model-derived** (``model_tolerance(dtype, scale)``): a number that a model's
  floating-point kernels computed (a log-likelihood, a pseudo-log-likelihood, a logit), and
  every number derived from one (means, differences, ratios, intervals, p-values). BLAS
  and oneDNN pick their blocking and vector width per CPU (AVX2, AVX-512, FMA or not), so
  the same model on another machine sums in another order: on an AMD EPYC with AVX-512 the
  tiny models' sentence log-likelihoods (about -500) moved by 1.2e-5 (relative 2e-8).

The model tolerance is ``rtol = TERMS * eps(dtype)`` (float32: 128 * 1.19e-7 = 2**-16 = 1.53e-5), the
first-order worst-case rounding bound of a sum of ``TERMS`` terms (a sentence of up to ~128
tokens, each token's log-probability itself a difference ``logit - logsumexp``), and
``atol = rtol * scale`` where ``scale`` is the magnitude of the raw model outputs the
number was derived from: a difference of two log-likelihoods of -500 near 0 (a bias score,
a PC variance) can move by ``rtol * 500`` although it is itself small, so no relative
tolerance alone can hold it. Integers, strings, booleans and nulls are always compared
exactly (a count that a near-tie of two model scores decides is a defect of the test input).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# Machine epsilon (spacing of floats at 1.0) of the dtypes a model may compute in.
EPS: dict[str, float] = {
    "float64": 2.0**-52,
    "float32": 2.0**-23,
    "float16": 2.0**-10,
    "bfloat16": 2.0**-7,
}
TERMS = 128  # the terms one model number sums: the tokens of a sentence (rounding error grows ~ TERMS * eps)
EXACT_RELATIVE = 1e-12


@dataclass(frozen=True)
class Tolerance:
    """``a`` and ``b`` are close when ``|a - b| <= max(atol, rtol * max(|a|, |b|))``."""

    rtol: float
    atol: float
    why: str = "exact"

    def close(self, a: float, b: float) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= max(self.atol, self.rtol * max(abs(a), abs(b)))

    def __str__(self) -> str:
        return f"{self.why}: relative {self.rtol:.3g}, absolute {self.atol:.3g}"


EXACT = Tolerance(rtol=EXACT_RELATIVE, atol=EXACT_RELATIVE)


def model_tolerance(dtype: str = "float32", scale: float = 1.0) -> Tolerance:
    """The tolerance of numbers a ``dtype`` model's kernels computed from raw outputs of magnitude ``scale``."""
    if dtype not in EPS:
        raise ValueError(f"unknown dtype {dtype!r}: choose from {', '.join(EPS)}")
    if not scale > 0:
        raise ValueError(f"scale must be positive, not {scale!r}")
    rtol = max(TERMS * EPS[dtype], EXACT_RELATIVE)
    return Tolerance(rtol=rtol, atol=max(rtol * scale, EXACT_RELATIVE), why=f"{dtype} model outputs of magnitude {scale:g}")


def differences(expected: Any, actual: Any, where: str = "$", tolerance: Tolerance = EXACT) -> Iterator[str]:  # Any: JSON values
    """Each difference as ``path: expected != actual``: floats within ``tolerance``, all else exactly."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(expected.keys() | actual.keys(), key=str):
            if key not in actual:
                yield f"{where}.{key}: missing (expected {expected[key]!r})"
            elif key not in expected:
                yield f"{where}.{key}: unexpected {actual[key]!r}"
            else:
                yield from differences(expected[key], actual[key], f"{where}.{key}", tolerance)
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            yield f"{where}: {len(expected)} elements expected, {len(actual)} found"
        for n, (a, b) in enumerate(zip(expected, actual)):
            yield from differences(a, b, f"{where}[{n}]", tolerance)
    elif type(expected) is float and type(actual) is float:
        if not tolerance.close(expected, actual):
            yield f"{where}: {expected!r} != {actual!r} (difference {actual - expected:.3g})"
    elif type(expected) is not type(actual) or expected != actual:
        yield f"{where}: {expected!r} != {actual!r}"


def _plain(value: Any) -> Any:  # Any: a number, a sequence or mapping of them, a numpy array or torch tensor
    """``value`` as JSON-like Python values: arrays and tensors as nested lists of floats, numbers as floats."""
    if isinstance(value, Mapping):
        return {key: _plain(v) for key, v in value.items()}
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    import numpy as np

    array = np.asarray(value, dtype=np.float64)  # numpy arrays, numpy scalars, CPU torch tensors
    return array.tolist() if array.ndim else float(array)


def assert_model_close(found: Any, expected: Any, dtype: str = "float32", scale: float = 1.0, what: str = "") -> None:  # Any: see _plain
    """Assert that model outputs ``found`` match ``expected`` within ``model_tolerance(dtype, scale)``.

    ``scale``: the magnitude of the raw model outputs these numbers come from (1 for the
    outputs themselves when they are of order 1 or compared relatively; the size of a
    sentence's log-likelihood for a difference of two of them)."""
    tolerance = model_tolerance(dtype, scale)
    found_lines = list(differences(_plain(expected), _plain(found), tolerance=tolerance))
    assert not found_lines, f"{what or 'model outputs'} differ beyond {tolerance}:\n" + "\n".join(found_lines[:20])
