"""McBE: five bias tasks over Bias Evaluation Instances (PROTOCOLS §3).

PC scores every substitution of every BEI in one scorer call; SC, SS and BA's
analyses are one generator call each; BA's judge and BS's ratings are one call per
retry round. Each task can run alone (``--set protocol.tasks=pc,ss``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from culturebias.application.context import RunContext
from culturebias.application.mcbe.analysis import bias_analysis
from culturebias.application.mcbe.classification import subcategory_classification
from culturebias.application.mcbe.outcome import TaskOutcome
from culturebias.application.mcbe.preference import preference_computation
from culturebias.application.mcbe.scoring import bias_scoring
from culturebias.application.mcbe.selection import scenario_selection
from culturebias.domain.errors import ConfigError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.mcbe.instances import McBEDataset
from culturebias.domain.mcbe.metrics import aggregate
from culturebias.domain.mcbe.settings import TASK_NAMES, McBESettings
from culturebias.domain.mcbe.taxonomy import category_name_zh
from culturebias.domain.runs import ProtocolOutcome

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
    name: ClassVar[str] = "mcbe"
    settings_model: ClassVar[type[McBESettings]] = McBESettings

    def __init__(self, settings: McBESettings):
        self.settings = settings

    def preflight(self, ctx: RunContext) -> None:
        tasks = self.settings.tasks
        if "pc" in tasks:
            ctx.scorer().check_loglikelihood()
        if any(t in tasks for t in GENERATION_TASKS):
            ctx.generator()  # building the port raises CapabilityError when the backend cannot generate
        if "ba" in tasks:
            ctx.judge()

    def run(self, ctx: RunContext, dataset: McBEDataset) -> ProtocolOutcome:
        settings = self.settings
        unknown = [c for c in settings.categories if c not in dataset.categories]
        if unknown:
            raise ConfigError(f"protocol.categories names {unknown}, not in the data; the data has {dataset.categories}")
        selected = dataset.restricted(settings.categories or None, settings.limit)
        beis = list(selected.instances)
        categories = selected.categories
        ctx.log.info("mcbe run", beis=len(beis), categories=len(categories), tasks=",".join(settings.tasks))

        outcomes: dict[str, TaskOutcome] = {}
        for task in settings.tasks:
            if task == "pc":
                outcomes[task] = preference_computation(ctx, beis, settings)
            elif task == "sc":
                outcomes[task] = subcategory_classification(ctx, beis, dataset, settings)
            elif task == "ss":
                outcomes[task] = scenario_selection(ctx, beis, settings)
            elif task == "ba":
                outcomes[task] = bias_analysis(ctx, beis, settings)
            else:
                outcomes[task] = bias_scoring(ctx, beis, settings)

        summary = aggregate({t: o.scores for t, o in outcomes.items()}, categories, settings.tasks)
        per_category: dict[str, dict[str, Any]] = {}
        for category in categories:
            invalid: dict[str, int] = {}
            for task, outcome in outcomes.items():
                invalid.update({key: 0 for key in INVALID_COUNTS[task]})
                invalid.update(outcome.invalid.get(category, {}))
            per_category[category] = {
                **summary.categories[category],
                "name_zh": category_name_zh(category),
                "n_beis": len(selected.by_category(category)),
                "invalid": invalid,
            }
        metrics: dict[str, Any] = {
            "tasks": summary.tasks,
            "categories": per_category,
            "overall": summary.overall,
            "task_names": {t: TASK_NAMES[t] for t in settings.tasks},
            "decay": {
                "pc": {"choice": settings.pc_decay, "rate": settings.pc_rate},
                "ss": {"choice": settings.ss_decay, "rate": settings.ss_rate},
            },
            "preference_skip": settings.preference_skip,
        }
        counts: dict[str, Any] = {"beis": len(beis), "categories": len(categories)}
        for task, outcome in outcomes.items():
            counts.update({key: 0 for key in INVALID_COUNTS[task]})
            counts.update(outcome.counts)
        judge_block = self._judge_block(ctx) if "ba" in outcomes else None
        if judge_block is not None:
            metrics["judge"] = judge_block
        details = {
            "items": self._items(selected, outcomes),
            "subcategories": {c: dataset.subcategories(c) for c in categories},
        }
        return ProtocolOutcome(
            metrics=metrics, counts=counts, notes=self._notes(selected, outcomes, judge_block), details=details
        )

    # -- pieces ------------------------------------------------------------------------
    @staticmethod
    def _items(dataset: McBEDataset, outcomes: dict[str, TaskOutcome]) -> dict[str, dict[str, Any]]:
        items: dict[str, dict[str, Any]] = {}
        for bei in dataset.instances:
            item: dict[str, Any] = {
                "category": bei.category,
                "file": bei.source,
                "row": bei.row,
                "subtype": bei.subtype,
                "words": list(bei.words),
                "default_sentence": bei.default_sentence,
                "human_score": bei.score,
            }
            for task, outcome in outcomes.items():
                if bei.item_id in outcome.items:
                    item[task] = outcome.items[bei.item_id]
            items[bei.item_id] = item
        return items

    def _judge_block(self, ctx: RunContext) -> dict[str, Any]:
        judge: ModelIdentity = ctx.judge().identity
        evaluated: ModelIdentity = ctx.generator().identity
        return {
            "model": judge.model,
            "backend": judge.backend,
            "parameters": judge.parameters,
            "is_evaluated_model": judge.cache_key() == evaluated.cache_key(),
            "max_retries": getattr(ctx.judge(), "max_retries", None),
        }

    def _notes(self, dataset: McBEDataset, outcomes: dict[str, TaskOutcome], judge: dict[str, Any] | None) -> list[str]:
        notes = list(dataset.notes)
        skipped = [c for c in dataset.categories if c in self.settings.preference_skip]
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
            params = judge.get("parameters")
            size = f"{params:,} parameters" if params else "size unknown"
            who = "the evaluated model itself" if judge["is_evaluated_model"] else "a separate model"
            notes.append(f"BA judge: {judge['model']} via {judge['backend']} ({size}), {who}")
            if params and params < SMALL_JUDGE_PARAMETERS:
                notes.append(
                    f"The BA judge has only {size}: it cannot grade analyses reliably, so BA numbers here show "
                    "that the pipeline runs, not how well the model analyses bias. Set judge.path (and "
                    "judge.backend) to a strong model for meaningful BA scores."
                )
        for outcome in outcomes.values():
            notes.extend(outcome.notes)
        return notes
