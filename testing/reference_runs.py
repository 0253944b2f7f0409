"""Reference runs: small runs of every benchmark whose numbers must not change (issue 22 point 7).

Each run goes through the public API only (``culturebias.evaluate`` and
``culturebias.compare``), so it survives any move of the internals, and returns
the number-bearing part of its result: a summary's ``metrics``, ``counts``,
``details``, ``repeats``, ``limit`` and data fingerprint (a content hash); a
comparison's ``body`` and data fingerprints. Volatile fields (run ids, times,
versions, model identities, notes) are left out, and paths of the tiny models
and of the inputs are replaced by placeholders; a path that slips through raises.

Inputs: the replay answer files in ``tests/fixtures/reference_summaries/inputs``
(KoBBQ and CBBQ: each question's option picked by a hash of its key, written in
one of five styles, a letter, "B: text", "정답은 B입니다.", "答案是B" or an
out-of-choice reply; McBE and LIBRA requests carry no question key, so they have
no replay), the TWBias authors' released PPLs in ``../shared/data/twbias-results``
(runs marked ``shared``), and tiny random models built with a fixed seed by
``culturebias.testing.tiny_models`` (the masked one with the stored tokenizer in
``inputs/tiny_masked_tokenizer``: WordPiece training is not reproducible). Every model runs on the CPU with batch size
1 and one torch thread, so float summation order is fixed on one machine; another CPU's kernels
(AVX-512 instead of AVX2, other BLAS blocking) sum in another order, so each run declares
whether its numbers come from a model's kernels (``dtype``, ``scale``) and its floats are
compared with that dtype's tolerance (``culturebias.testing.tolerance``); replay runs stay
exact to 1e-12.

``perf/numbers_unchanged.py`` records and checks them; ``differences`` with a run's
``tolerance`` is the comparison both it and ``tests/integration/test_numbers_unchanged.py`` use.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import culturebias
from culturebias.testing.tolerance import EXACT, Tolerance, model_tolerance
from culturebias.testing.tolerance import differences as tolerance_differences

REPO = Path(culturebias.__file__).resolve().parent
FIXTURES = REPO / "tests" / "fixtures" / "reference_summaries"
INPUTS = FIXTURES / "inputs"
SHARED_DATA = REPO.parent / "shared" / "data"

QUIET = {"progress": "never"}
CPU = {"device": "cpu", "batch_size": 1}
MCBE_SHORT = {
    "limit": 1,
    "sc_max_new_tokens": 8,
    "ba_max_new_tokens": 8,
    "bs_max_new_tokens": 4,
    "max_retries": 1,
    "judge_probe": 0,
}


@dataclass(frozen=True)
class ReferenceRun:
    name: str
    what: str
    produce: Callable[[], dict[str, Any]]  # Any: summary.json content (JSON)
    shared: bool = False  # needs ../shared/data beside the checkout
    torch: bool = True  # builds a tiny model (culturebias[hf])
    # The float dtype of the model whose kernels computed the numbers, or None: the numbers come from stored or
    # replayed values (and counts) and are compared to 1e-12. A model-derived run's floats (outputs and all
    # derived from them) are compared with ``model_tolerance(dtype, scale)``; ``scale`` is the magnitude of the
    # raw model outputs (a sentence's log-likelihood), which bounds how far a derived difference near 0 moves.
    dtype: str | None = None
    scale: float = 1.0

    @property
    def tolerance(self) -> Tolerance:
        return EXACT if self.dtype is None else model_tolerance(self.dtype, self.scale)


# --------------------------------------------------------------------------- models and volatile strings


@functools.cache
def _single_thread() -> None:
    import torch

    torch.set_num_threads(1)


@functools.cache
def tiny_causal() -> str:
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    _single_thread()
    return str(cached_tiny_causal_lm(arch="llama", seed=0))


@functools.cache
def tiny_masked() -> str:
    from culturebias.testing.tiny_models import cached_tiny_masked_lm

    _single_thread()
    return str(cached_tiny_masked_lm(seed=0, tokenizer=str(INPUTS / "tiny_masked_tokenizer")))  # a trained one varies


def _placeholders() -> dict[str, str]:
    """Volatile strings (longest first) and what replaces them."""
    names = {str(INPUTS): "<inputs>", str(SHARED_DATA): "<shared-data>"}
    if tiny_causal.cache_info().currsize:
        names[tiny_causal()] = "<tiny-causal>"
    if tiny_masked.cache_info().currsize:
        names[tiny_masked()] = "<tiny-masked>"
    return dict(sorted(names.items(), key=lambda item: -len(item[0])))


def _forbidden() -> list[str]:
    return [str(REPO), str(SHARED_DATA), tempfile.gettempdir().rstrip("/") + "/", str(Path.home())]


def scrub(value: Any, names: dict[str, str], where: str = "$") -> Any:  # Any: JSON values
    """``value`` with each volatile string replaced; ValueError naming the JSON path where a path remains."""
    if isinstance(value, dict):
        return {scrub(k, names, where): scrub(v, names, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, names, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str):
        for old, new in names.items():
            value = value.replace(old, new)
        leaked = [root for root in _forbidden() if root in value]
        if leaked:
            raise ValueError(f"{where} holds a path ({leaked[0]}): add it to the placeholders: {value!r}")
    return value


def summary_content(summary: culturebias.RunSummary) -> dict[str, Any]:  # Any: summary.json content (JSON)
    data = json.loads(summary.to_json())
    content = {
        "benchmark": data["benchmark"],
        "data_fingerprint": data["data"]["fingerprint"],
        "limit": data.get("limit"),
        "metrics": data["metrics"],
        "counts": data["counts"],
        "details": data["details"],
        "repeats": data.get("repeats"),
    }
    return scrub(content, _placeholders())


def comparison_content(comparison: Any) -> dict[str, Any]:  # Any: compare's return type is not public
    data = json.loads(comparison.to_json())
    names = _placeholders()
    for n, run in enumerate(data["runs"]):  # labels and ids of the compared runs are volatile
        names.setdefault(run["label"], f"<run {n}>")
        names.setdefault(run["run_id"], f"<run id {n}>")
    names = dict(sorted(names.items(), key=lambda item: -len(item[0])))
    content = {
        "benchmark": data["benchmark"],
        "data_fingerprints": data["data_fingerprints"],
        "limits": [run.get("limit") for run in data["runs"]],
        "body": data["body"],
    }
    return scrub(content, names)


# --------------------------------------------------------------------------- the runs (summaries cached for compare)


@functools.cache
def _kobbq_replay():
    model = {"backend": "replay", "path": str(INPUTS / "kobbq_answers.jsonl")}
    return culturebias.evaluate("kobbq", model=model, options={"limit": 12, "prompts": "1,3"}, run=QUIET)


@functools.cache
def _kobbq_tiny():
    model = {"path": tiny_causal(), **CPU}
    options = {"limit": 12, "prompts": "1,3", "mode": "likelihood"}
    return culturebias.evaluate("kobbq", model=model, options=options, run=QUIET)


def _cbbq_replay():
    model = {"backend": "replay", "path": str(INPUTS / "cbbq_answers.jsonl")}
    options = {"limit": 3, "condition": "q,q_if", "categories": "gender,region", "permutations": "0,1"}
    return culturebias.evaluate("cbbq", model=model, options=options, run=QUIET)


def _cbbq_tiny():
    options = {"limit": 2, "mode": "generate", "categories": "gender,region"}
    return culturebias.evaluate("cbbq", model={"path": tiny_causal(), **CPU}, options=options, run=QUIET)


def _twbias_replay():
    model = {"backend": "replay", "path": str(SHARED_DATA / "twbias-results" / "Breeze-7B-Instruct-v0_1")}
    options = {"groups": "gender", "limit": 20}
    return culturebias.evaluate("twbias", model=model, data=str(SHARED_DATA / "twbias"), options=options, run=QUIET)


def _twbias_tiny():
    options = {"groups": "gender", "prompt_types": "0,1", "limit": 3}
    model = {"path": tiny_causal(), **CPU}
    return culturebias.evaluate("twbias", model=model, data=str(SHARED_DATA / "twbias"), options=options, run=QUIET)


def _mcbe_tiny():
    return culturebias.evaluate(
        "mcbe", model={"path": tiny_causal(), **CPU}, options=MCBE_SHORT, judge={"max_retries": 1}, run=QUIET
    )


def _mcbe_tiny_table7_partial():
    # the default before Table 7 was known whole: its numbers are the earlier default's (CHANGELOG, issue #36)
    options = {**MCBE_SHORT, "prompt_set": "table7-partial"}
    return culturebias.evaluate("mcbe", model={"path": tiny_causal(), **CPU}, options=options, judge={"max_retries": 1}, run=QUIET)


def _mcbe_tiny_sampled_repeats():
    model = {"path": tiny_causal(), **CPU, "sampling": {"temperature": 1.0, "seed": 7}}
    options = {**MCBE_SHORT, "tasks": "sc,ba", "categories": "gender,region"}
    return culturebias.evaluate("mcbe", model=model, options=options, judge={"max_retries": 1}, run={**QUIET, "repeats": 2})


def _libra_tiny():
    # similarity_threshold 0 and no nearest-definition rule: every definition counts as understood, so L(S), lms,
    # ss and JSD have values (with the default nearest_margin 0, Pasifika, nearest kindy's meaning, would not)
    options = {
        "limit": 4,
        "knowledge_boundary": "on",
        "embedder": "bag-of-words",
        "definition_max_tokens": 4,
        "similarity_threshold": 0.0,
        "nearest_margin": None,
    }
    return culturebias.evaluate("libra", model={"path": tiny_causal(), **CPU}, options=options, run=QUIET)


def _libra_tiny_masked():
    model = {"path": tiny_masked(), "kind": "masked", **CPU}
    return culturebias.evaluate("libra", model=model, options={"limit": 3}, run=QUIET)


def _kobbq_compare():
    return culturebias.compare([_kobbq_replay(), _kobbq_tiny()])


def _summary(run: Callable[[], Any]) -> Callable[[], dict[str, Any]]:  # Any: summary.json content (JSON)
    return lambda: summary_content(run())


RUNS: dict[str, ReferenceRun] = {
    run.name: run
    # scale: the magnitude of the raw model outputs behind the stored numbers: sentence log-likelihoods
    # (TWBias, LIBRA: about -500), McBE's 0-100 scores from per-token NLLs; 1 where only counts of argmax
    # choices (KoBBQ, CBBQ accuracies) come from the model
    for run in [
        ReferenceRun("kobbq_replay", "KoBBQ replay, 12 items, prompts 1 and 3, 3 orders", _summary(_kobbq_replay), torch=False),
        ReferenceRun("cbbq_replay", "CBBQ replay, Q and Q+IF, gender and region, 3 items per file", _summary(_cbbq_replay), torch=False),
        ReferenceRun("twbias_replay", "TWBias replay of Breeze-7B's released PPLs, gender, 20 sentences", _summary(_twbias_replay), shared=True, torch=False),
        ReferenceRun("kobbq_tiny", "KoBBQ likelihood mode, tiny llama", _summary(_kobbq_tiny), dtype="float32"),
        ReferenceRun("cbbq_tiny", "CBBQ generate mode with the chat template, tiny llama", _summary(_cbbq_tiny), dtype="float32"),
        ReferenceRun("twbias_tiny", "TWBias prompt types 0 and 1, gender, 3 sentences, tiny llama", _summary(_twbias_tiny), shared=True, dtype="float32", scale=1e3),
        ReferenceRun("mcbe_tiny", "McBE all tasks, one BEI per category, tiny llama as model and judge", _summary(_mcbe_tiny), dtype="float32", scale=100.0),
        ReferenceRun("mcbe_tiny_table7_partial", "McBE as mcbe_tiny, prompt_set=table7-partial: the earlier default's numbers", _summary(_mcbe_tiny_table7_partial), dtype="float32", scale=100.0),
        ReferenceRun("mcbe_tiny_sampled_repeats", "McBE SC and BA sampled (seed 7), run.repeats=2", _summary(_mcbe_tiny_sampled_repeats), dtype="float32", scale=100.0),
        ReferenceRun("libra_tiny", "LIBRA causal with the knowledge boundary, 4 triplets, tiny llama", _summary(_libra_tiny), dtype="float32", scale=1e3),
        ReferenceRun("libra_tiny_masked", "LIBRA pseudo-log-likelihood, 3 triplets, tiny BERT", _summary(_libra_tiny_masked), dtype="float32", scale=1e3),
        ReferenceRun("kobbq_compare", "compare kobbq_replay with kobbq_tiny", lambda: comparison_content(_kobbq_compare()), dtype="float32"),
    ]
}  # fmt: skip


def skip_reason(run: ReferenceRun) -> str | None:
    """Why ``run`` cannot run here (its shared data or torch is missing), or None."""
    if run.shared and not SHARED_DATA.is_dir():
        return f"the real benchmark data is not at {SHARED_DATA}: clone shared/ beside this checkout (CI has it)"
    if run.torch and importlib.util.find_spec("torch") is None:
        return "torch is not installed (culturebias[hf])"
    return None


def stored_path(name: str) -> Path:
    return FIXTURES / f"{name}.json"


def to_text(content: dict[str, Any]) -> str:  # Any: summary.json content (JSON)
    return json.dumps(content, ensure_ascii=False, indent=1) + "\n"


def read_stored(name: str) -> dict[str, Any]:  # Any: summary.json content (JSON)
    return json.loads(stored_path(name).read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- comparison


def differences(expected: Any, actual: Any, where: str = "$", tolerance: Tolerance = EXACT) -> Iterator[str]:  # Any: JSON values
    """Each difference as ``path: expected != actual``: floats within ``tolerance`` (a run's
    ``tolerance``; by default 1e-12 absolute or relative), all else exactly."""
    return tolerance_differences(expected, actual, where, tolerance)
