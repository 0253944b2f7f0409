"""Numbers a model's kernels computed carry their dtype's tolerance; numbers from stored or replayed values are exact (issue 34 point 6).

Checked on the stored reference summaries themselves (no model runs here): a perturbation a
CPU's kernels could cause passes on a float32 run and fails on a replay run; a perturbation
that a change of code would cause fails on both.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from culturebias.testing import reference_runs as ref
from culturebias.testing.tolerance import EPS, EXACT, assert_model_close, differences, model_tolerance

STORED = [name for name in ref.RUNS if ref.stored_path(name).is_file()]


def floats(value, where="$"):
    """Every float in a JSON value, as (path, value)."""
    if isinstance(value, dict):
        for key, v in value.items():
            yield from floats(v, f"{where}.{key}")
    elif isinstance(value, list):
        for n, v in enumerate(value):
            yield from floats(v, f"{where}[{n}]")
    elif type(value) is float:
        yield where, value


def scaled(value, factor):
    """``value`` with every float multiplied by ``factor`` (integers, strings, nulls as they are)."""
    if isinstance(value, dict):
        return {key: scaled(v, factor) for key, v in value.items()}
    if isinstance(value, list):
        return [scaled(v, factor) for v in value]
    return value * factor if type(value) is float else value


def reported_paths(lines):
    return {line.split(": ", 1)[0] for line in lines}


def test_every_run_declares_where_its_numbers_come_from():
    replays = {name for name, run in ref.RUNS.items() if run.dtype is None}
    assert replays == {"kobbq_replay", "cbbq_replay", "twbias_replay"}
    for name, run in ref.RUNS.items():
        if run.dtype is None:
            assert run.tolerance == EXACT, name
        else:
            assert run.torch or name == "kobbq_compare", f"{name} is model-derived but builds no model"
            assert run.tolerance.rtol == pytest.approx(128 * 2.0**-23) and run.tolerance.atol == pytest.approx(run.tolerance.rtol * run.scale)


@pytest.mark.parametrize("name", STORED)
def test_a_kernel_sized_perturbation_passes_on_a_float32_run_and_fails_on_a_replay_run(name):
    run, stored = ref.RUNS[name], ref.read_stored(name)
    nudged = scaled(stored, 1 + 1e-5)  # 10x what another CPU's kernels moved the tiny models' numbers
    found = list(ref.differences(stored, nudged, tolerance=run.tolerance))
    if run.dtype == "float32":
        assert found == []
    else:
        changed = {path for path, value in floats(stored) if value != 0.0}
        assert changed and reported_paths(found) == changed


@pytest.mark.parametrize("name", STORED)
def test_a_code_sized_perturbation_fails_on_every_run(name):
    run, stored = ref.RUNS[name], ref.read_stored(name)
    found = reported_paths(ref.differences(stored, scaled(stored, 1 + 1e-3), tolerance=run.tolerance))
    at_scale = {path for path, value in floats(stored) if abs(value) >= run.scale / 20}
    assert at_scale and at_scale <= found  # every number of the order of the model outputs behind it is caught


def test_a_difference_near_zero_moves_with_the_magnitude_of_its_inputs():
    tolerance = model_tolerance("float32", scale=500.0)  # e.g. two sentence log-likelihoods of -500 subtracted
    assert tolerance.atol == pytest.approx(500 * 128 * 2.0**-23)
    assert list(differences({"bias": 0.0}, {"bias": 0.5 * tolerance.atol}, tolerance=tolerance)) == []
    assert list(differences({"bias": 0.0}, {"bias": 2 * tolerance.atol}, tolerance=tolerance)) != []
    assert list(differences({"bias": 0.0}, {"bias": 1e-9}, tolerance=EXACT)) != []
    assert list(differences({"bias": 0.0}, {"bias": 1e-9}, tolerance=model_tolerance("float32"))) == []


def test_the_tolerance_follows_the_dtype_and_refuses_what_it_does_not_know():
    assert model_tolerance("float64").rtol == 1e-12  # float64 kernels: as exact as stored values
    assert model_tolerance("float32").rtol == 2.0**-16  # 128 x 2**-23 = 1.53e-5
    assert model_tolerance("bfloat16").rtol > model_tolerance("float16").rtol > model_tolerance("float32").rtol
    assert set(EPS) == {"float64", "float32", "float16", "bfloat16"}
    with pytest.raises(ValueError, match="unknown dtype 'int8'"):
        model_tolerance("int8")
    with pytest.raises(ValueError, match="scale must be positive"):
        model_tolerance("float32", scale=0.0)


def test_integers_strings_and_special_floats_stay_exact_under_the_model_tolerance():
    tolerance = model_tolerance("float32", scale=1e3)
    assert list(differences({"n": 3, "s": "a"}, {"n": 4, "s": "a"}, tolerance=tolerance)) == ["$.n: 3 != 4"]
    assert list(differences([math.nan, math.inf], [math.nan, math.inf], tolerance=tolerance)) == []
    assert len(list(differences([math.nan, math.inf, 1.0], [1.0, -math.inf, math.nan], tolerance=tolerance))) == 3


def test_assert_model_close_takes_arrays_and_names_the_element_that_moved():
    logprobs = np.array([-512.25, -3.5, -0.125], dtype=np.float32)
    assert_model_close(logprobs * np.float32(1 + 1e-6), logprobs)  # another CPU's kernels
    assert_model_close([-512.25 + 2e-3], [-512.25])
    with pytest.raises(AssertionError, match=r"\$\[1\]: -3.5 != -3.49"):
        assert_model_close(logprobs + np.array([0.0, 0.01, 0.0]), logprobs, what="log-likelihoods")
    assert_model_close({"bias": 1e-3}, {"bias": 0.0}, scale=500.0)  # a difference of two -500s
    with pytest.raises(AssertionError, match="bias"):
        assert_model_close({"bias": 1e-3}, {"bias": 0.0})
