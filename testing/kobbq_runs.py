"""Whole KoBBQ runs of scripted models with a fixed answering policy, for comparison tests and speed scripts.

``kobbq_run("biased", name="stereotyper")`` runs the bundled KoBBQ test split
through the real orchestrator with a generator that always picks the biased
option (``"unknown"``, ``"counter"``, ``"correct"`` or a seeded ``"random"``
likewise, or any function of the item) and replies with the letter it is shown
under. The position policies ``"first"``, ``"second"`` and ``"third"`` reply with
that shown letter whatever the options say (a content-blind model, PROTOCOLS §6). ``in_memory=True`` hands the same items over as a loaded dataset, whose
data fingerprint then differs from the bundled files'.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from culturebias.adapters.kobbq.files import KoBBQFiles
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.application.run_benchmark import RunResult
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.kobbq.prompts import KoBBQDataset
from culturebias.domain.bbq.model import QAItem
from culturebias.domain.requests import GenerationRequest
from culturebias.ports.results import ResultStore
from culturebias.testing.context import run_with_fakes

LETTERS = "ABC"
Policy = Callable[[QAItem], int]  # the dataset option index a model picks


def _other_group(item: QAItem) -> int:
    return next(i for i in range(3) if i not in (item.biased_index, item.unknown_index))


POLICIES: dict[str, Policy] = {
    "biased": lambda item: item.biased_index if item.biased_index is not None else item.unknown_index,
    "unknown": lambda item: item.unknown_index,
    "counter": _other_group,
    "correct": lambda item: item.answer_index,
}
POSITIONS = {"first": 0, "second": 1, "third": 2}  # always the letter shown at this position


@functools.cache
def bundled_kobbq() -> KoBBQDataset:
    return KoBBQFiles(None).load()


def policy_generator(policy: str | Policy, name: str, seed: int = 0) -> ScriptedGenerator:
    """A scripted generator answering every KoBBQ question by ``policy``."""
    by_id = {item.sample_id: item for item in bundled_kobbq().items}
    if isinstance(policy, str) and policy in POSITIONS:
        letter = LETTERS[POSITIONS[policy]]
        return ScriptedGenerator(lambda _request, _rendered: letter, name=name)
    if policy == "random":
        rng = random.Random(seed)
        choose: Policy = lambda item: rng.randrange(3)  # noqa: E731
    else:
        choose = POLICIES[policy] if isinstance(policy, str) else policy

    def reply(request: GenerationRequest, _rendered: str) -> str:
        assert request.key is not None
        key = AnswerKey.decode(request.key)
        return LETTERS[shown_order(3, key.permutation).index(choose(by_id[key.sample_id]))]

    return ScriptedGenerator(reply, name=name)


def kobbq_run(
    policy: str | Policy,
    *,
    name: str | None = None,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,  # Any: protocol.* values (TOML/JSON)
    out_dir: Path | None = None,
    store: ResultStore | None = None,
    in_memory: bool = False,
) -> RunResult:
    """One finished KoBBQ run of a scripted model (generate mode; the options default to prompts 1,2 and one order)."""
    protocol = {"mode": "generate", "prompts": "1,2", "permutations": "0", "statistics": False, **dict(options or {})}
    label = name or (policy if isinstance(policy, str) else "scripted-policy")
    return run_with_fakes(
        "kobbq",
        options=protocol,
        dataset=bundled_kobbq() if in_memory else None,
        out_dir=out_dir,
        store=store,
        generator=policy_generator(policy, label, seed),
    )
