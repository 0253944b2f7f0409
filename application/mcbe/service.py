"""McBE: five bias tasks over Bias Evaluation Instances (PROTOCOLS §3).

PC scores every substitution of every BEI in one scorer call; SC, SS and BA's
analyses are one generator call each; BA's judge and BS's ratings are one call per
retry round. Each task can run alone (``--set protocol.tasks=pc,ss``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from culturebias.application.context import RunContext
from culturebias.application.sampling import sampled_items
from culturebias.domain.mcbe.strata import STRATA as MCBE_STRATA
from culturebias.domain.stratified import SampleBlock, sample_notes
from culturebias.application.mcbe.records import record_mcbe
from culturebias.application.mcbe.analysis import bias_analysis
from culturebias.application.mcbe.classification import subcategory_classification
from culturebias.application.mcbe.fidelity import fidelity_metrics
from culturebias.application.mcbe.outcome import TaskOutcome
from culturebias.application.mcbe.plan import McBEPlan
from culturebias.application.mcbe.preference import preference_computation
from culturebias.application.mcbe.scoring import bias_scoring
from culturebias.application.mcbe.selection import scenario_selection
from culturebias.domain.errors import ConfigError
from culturebias.domain.mcbe.instances import McBEDataset
from culturebias.domain.mcbe.metrics import aggregate
from culturebias.domain.mcbe.options import TASK_NAMES, McBEOptions
from culturebias.ports.judging import RetryingJudge
from culturebias.domain.mcbe.summary import (
    CategoryScores,
    Decay,
    DecayChoice,
    InvalidCounts,
    JudgeFacts,
    McBECounts,
    McBEDetails,
    McBEItem,
    McBEMetrics,
    McBEOutcome,
    PerTask,
    SSItem,
)
from culturebias.domain.mcbe.validity import mcbe_validity
from culturebias.domain.validity import validity_notes
from culturebias.domain.mcbe.taxonomy import category_name_zh
from culturebias.domain.summary import Number, run_limit
from culturebias.domain.mcbe.intervals import attach_mcbe
from culturebias.domain.mcbe.repeat_means import repeat_means

SMALL_JUDGE_PARAMETERS = 1_000_000_000
GENERATION_TASKS = ("sc", "ss", "ba", "bs")
# Reported for every category a task ran on, zeros included.
INVALID_COUNTS: dict[str, tuple[str, ...]] = {
    "pc": ("pc_skipped_no_tokens",),
    "sc": ("sc_several_named", "sc_none_named"),
    "ss": ("ss_unparseable",),
    "ba": ("ba_judge_invalid", "ba_judge_clamped"),
    "bs": ("bs_invalid", "bs_clamped"),
}


class McBEService:
    options_model: ClassVar[type[McBEOptions]] = McBEOptions

    def __init__(self, options: McBEOptions):
        self.options = options

    def preflight(self, ctx: RunContext) -> McBEPlan:
        tasks = tuple(self.options.tasks)
        if "pc" in tasks:
            ctx.scorer().check_loglikelihood()
        if any(t in tasks for t in GENERATION_TASKS):
            ctx.generator()  # building the port raises CapabilityError when the backend cannot generate
        return McBEPlan(tasks=tasks, judge=self._judge_facts(ctx, self.options) if "ba" in tasks else None)

    def combine_repeats(self, outcomes: Sequence[McBEOutcome]) -> McBEOutcome:
        """The first run's outcome with every score's mean ± std over the runs (PROTOCOLS §3 run protocol)."""
        means = repeat_means([o.metrics for o in outcomes])
        first = outcomes[0]
        return first.model_copy(update={"metrics": first.metrics.model_copy(update={"repeat_means": means})})

    def run(self, ctx: RunContext, dataset: McBEDataset, plan: McBEPlan) -> McBEOutcome:
        options = self.options
        unknown = [c for c in options.categories if c not in dataset.categories]
        if unknown:
            raise ConfigError(f"protocol.categories names {unknown}, not in the data; the data has {dataset.categories}")
        selected = dataset.restricted(options.categories or None, options.limit)
        beis, drawn_sample = sampled_items(list(selected.instances), options, ctx.seed, MCBE_STRATA)
        categories = selected.categories
        ctx.log.info("mcbe run", beis=len(beis), categories=len(categories), tasks=",".join(plan.tasks))

        outcomes: dict[str, TaskOutcome] = {}
        for task in plan.tasks:
            if task == "pc":
                outcomes[task] = preference_computation(ctx, beis, options)
            elif task == "sc":
                outcomes[task] = subcategory_classification(ctx, beis, dataset, options)
            elif task == "ss":
                outcomes[task] = scenario_selection(ctx, beis, options)
            elif task == "ba":
                outcomes[task] = bias_analysis(ctx, beis, options)
            else:
                outcomes[task] = bias_scoring(ctx, beis, options)

        scores = aggregate({t: o.scores for t, o in outcomes.items()}, categories, plan.tasks)
        per_category: dict[str, CategoryScores] = {}
        for category in categories:
            invalid: dict[str, int] = {}
            for task, outcome in outcomes.items():
                invalid.update({key: 0 for key in INVALID_COUNTS[task]})
                invalid.update(outcome.invalid.get(category, {}))
            task_scores: dict[str, Any] = dict(scores.categories[category])  # the tasks that ran, and "mean"; Any: CategoryScores' keyword arguments
            per_category[category] = CategoryScores(
                **task_scores,
                name_zh=category_name_zh(category),
                n_beis=len(selected.by_category(category)),
                invalid=InvalidCounts(**invalid),
            )
        judge: dict[str, Any] = {"judge": plan.judge} if plan.judge is not None else {}  # no key unless BA ran; Any: McBEMetrics' keyword arguments
        metrics = McBEMetrics(
            tasks=PerTask[Number](**scores.tasks),
            categories=per_category,
            overall=scores.overall,
            task_names=PerTask[str](**{t: TASK_NAMES[t] for t in plan.tasks}),
            decay=Decay(
                pc=DecayChoice(choice=options.pc_decay, rate=options.pc_rate),
                ss=DecayChoice(choice=options.ss_decay, rate=options.ss_rate),
            ),
            preference_skip=options.preference_skip,
            **judge,
            **fidelity_metrics(ctx, beis, dataset, options, outcomes),
        )
        attach_mcbe(metrics, outcomes, beis, seed=ctx.seed, resamples=ctx.bootstrap_resamples)
        counts: dict[str, int] = {"beis": len(beis), "categories": len(categories)}
        for task, outcome in outcomes.items():
            counts.update({key: 0 for key in INVALID_COUNTS[task]})
            counts.update(outcome.counts)
        details = McBEDetails(
            items=self._items(selected, outcomes),
            subcategories={c: dataset.subcategories(c) for c in categories},
        )
        record_mcbe(ctx, beis, details.items, options, dataset)
        ss = outcomes.get("ss")
        choices = [item.choices for item in ss.items.values() if isinstance(item, SSItem)] if ss is not None else None
        validity = mcbe_validity(choices, options.validity)
        return McBEOutcome(
            metrics=metrics,
            counts=McBECounts(**counts),
            notes=self._notes(selected, outcomes, plan.judge, drawn_sample) + validity_notes(validity),
            details=details,
            validity=validity,
            limit=run_limit(options),
            drawn_sample=drawn_sample,
        )

    # -- pieces ------------------------------------------------------------------------
    @staticmethod
    def _items(dataset: McBEDataset, outcomes: dict[str, TaskOutcome]) -> dict[str, McBEItem]:
        items: dict[str, McBEItem] = {}
        for bei in dataset.instances:
            results: dict[str, Any] = {  # Any: McBEItem's keyword arguments, one per task
                task: outcome.items[bei.item_id] for task, outcome in outcomes.items() if bei.item_id in outcome.items
            }
            items[bei.item_id] = McBEItem(
                category=bei.category,
                file=bei.source,
                row=bei.row,
                subtype=bei.subtype,
                words=list(bei.words),
                default_sentence=bei.default_sentence,
                human_score=bei.score,
                **results,
            )
        return items

    @staticmethod
    def _judge_facts(ctx: RunContext, options: McBEOptions) -> JudgeFacts:
        judge = ctx.judge()
        evaluated = ctx.generator().identity
        return JudgeFacts(
            model=judge.identity.model,
            backend=judge.identity.backend,
            parameters=judge.identity.parameters,
            is_evaluated_model=judge.identity.cache_key() == evaluated.cache_key(),
            max_retries=judge.max_retries if isinstance(judge, RetryingJudge) else None,
            probe=options.judge_probe,
            max_unparseable=options.judge_max_unparseable,
        )

    def _notes(
        self, dataset: McBEDataset, outcomes: dict[str, TaskOutcome], judge: JudgeFacts | None, drawn_sample: SampleBlock | None
    ) -> list[str]:
        notes = sample_notes(drawn_sample) + list(dataset.notes)
        skipped = [c for c in dataset.categories if c in self.options.preference_skip]
        runs_preference = [t.upper() for t in ("pc", "ss") if t in outcomes]
        if skipped and runs_preference:
            notes.append(
                f"{', '.join(skipped)} skipped by {' and '.join(runs_preference)} (PROTOCOLS §3): "
                "its substitution words are not comparable groups"
            )
        for task in ("pc", "ss"):
            single = outcomes[task].counts.get(f"{task}_skipped_single_word", 0) if task in outcomes else 0
            if single:
                notes.append(f"{task.upper()}: {single} BEI(s) with a single substitution word skipped (no variance to measure)")
        if judge is not None:
            params = judge.parameters
            size = f"{params:,} parameters" if params else "size unknown"
            who = "the evaluated model itself" if judge.is_evaluated_model else "a separate model"
            notes.append(f"BA judge: {judge.model} via {judge.backend} ({size}), {who}")
            if params and params < SMALL_JUDGE_PARAMETERS:
                notes.append(
                    f"The BA judge has only {size}: it cannot grade analyses reliably, so BA numbers here show "
                    "that the pipeline runs, not how well the model analyses bias. Set judge.path (and "
                    "judge.backend) to a strong model for meaningful BA scores."
                )
        for outcome in outcomes.values():
            notes.extend(outcome.notes)
        return notes
