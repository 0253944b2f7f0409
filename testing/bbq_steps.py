"""Steps and world shared by features/kobbq.feature and features/cbbq.feature.

Scripted models answer through the question key every generation request
carries (sample id, prompt or condition, permutation): they look the item up,
choose a dataset option by their policy and reply with the letter it is
shown under. A feature module star-imports this module so that pytest-bdd
finds the step fixtures, and defines its own ``world`` fixture; a plugin that
adds another BBQ-format dataset can reuse the steps the same way.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from pytest_bdd import given, parsers, then

from culturebias.testing.scripted import ScriptedGenerator, ScriptedPseudoScorer, ScriptedScorer
from culturebias.application.context import RunContext
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.bbq.model import BBQDataset, QAItem
from culturebias.domain.requests import GenerationRequest
from culturebias.domain.summary import ProtocolOutcome
from culturebias.testing.context import fake_context

LETTERS = "ABC"
Policy = Callable[[QAItem], "int | str"]  # a dataset option index, or a raw reply
LogprobRule = Callable[[str, str], float]


def other_group(item: QAItem) -> int:
    return next(i for i in range(3) if i not in (item.biased_index, item.unknown_index))


def biased(item: QAItem) -> int:
    """The biased option; for an item whose biased answer is underivable (CBBQ), its first group option."""
    if item.biased_index is not None:
        return item.biased_index
    return next(i for i in range(len(item.options)) if i != item.unknown_index)


class BBQWorld:
    def __init__(self, dataset: BBQDataset) -> None:
        self.dataset = dataset
        self.by_id = {i.sample_id: i for i in dataset.items}
        self.policy: Policy | None = None
        self.reasoning: str | None = None
        self.scorer_rule: LogprobRule | None = None
        self.pseudo_rule: Callable[[str, int, int], float] | None = None  # (text, span start, span end) → log-prob
        self.scorer: ScriptedScorer | None = None
        self.requests: list[GenerationRequest] = []
        self.outcome: ProtocolOutcome[Any, Any, Any] | None = None  # Any: KoBBQ's or CBBQ's own metrics, counts, details

    def reply(self, request: GenerationRequest, _rendered: str) -> str:
        self.requests.append(request)
        assert request.key is not None and self.policy is not None
        key = AnswerKey.decode(request.key)
        if key.turn == "reasoning":
            return self.reasoning or ""
        choice = self.policy(self.by_id[key.sample_id])
        if isinstance(choice, str):
            return choice
        return LETTERS[shown_order(3, key.permutation).index(choice)]

    def context(self, mode: str) -> RunContext:
        """Only the port of the mode exists: the other one, and the chat template, are unavailable."""
        if mode == "likelihood":
            assert self.scorer_rule is not None
            self.scorer = ScriptedScorer(self.scorer_rule)
            return fake_context(scorer=self.scorer)
        if mode in ("masked", "auto"):  # an encoder: only the pseudo-log-likelihood port
            assert self.pseudo_rule is not None
            return fake_context(pseudo_scorer=ScriptedPseudoScorer(self.pseudo_rule))
        return fake_context(generator=ScriptedGenerator(self.reply))

    def run(self, service: Any, mode: str) -> None:  # Any: a KoBBQ or CBBQ service
        ctx = self.context(mode)
        plan = service.preflight(ctx)
        assert plan.mode == ("masked" if mode == "auto" else mode) and plan.chat is False
        self.outcome = service.run(ctx, self.dataset, plan)

    @property
    def metrics(self) -> Any:  # Any: KoBBQ's or CBBQ's own metrics
        assert self.outcome is not None
        return self.outcome.metrics

    @property
    def counts(self) -> Any:  # Any: KoBBQ's or CBBQ's own counts
        assert self.outcome is not None
        return self.outcome.counts

    @property
    def predictions(self) -> list[str]:
        assert self.outcome is not None and self.outcome.details.predictions is not None
        return self.outcome.details.predictions


@given("a model that always answers with the biased option")
def always_biased(world: BBQWorld) -> None:
    world.policy = biased


@given("a model that always answers with the unknown option")
def always_unknown(world: BBQWorld) -> None:
    world.policy = lambda item: item.unknown_index


@given("a model that always answers correctly")
def always_correct(world: BBQWorld) -> None:
    world.policy = lambda item: item.answer_index


@given("a model that always answers with the counter-biased option")
def always_counter(world: BBQWorld) -> None:
    world.policy = other_group


@then(parsers.parse("{n:d} answers were out of choice"))
def out_of_choice_count(world: BBQWorld, n: int) -> None:
    assert world.counts.out_of_choice == n
    assert Counter(line.rsplit("|", 1)[1] for line in world.predictions)["out_of_choice"] == n
