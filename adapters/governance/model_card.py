"""A run as a Hugging Face model card: the ``model-index`` YAML block and a "Bias, Risks, and Limitations" section.

The metadata is built with huggingface_hub's own ``ModelCardData`` / ``EvalResult``, so
``ModelCard.load`` and ``metadata_load`` read it back: one result per defined headline,
the dataset named by the benchmark, its config the benchmark, its revision the run's data
fingerprint, the metric's type its headline name, its value the run's. The Hugging Face result
format has no uncertainty field, so the 95% interval travels in the metric's ``args`` (free-form
in the format): ``ci_low``, ``ci_high``, ``ci_level``, ``n`` (resampling units) and ``unit``, with
``caveats`` / ``caveat_kinds`` (``domain/caveats.py``) and ``direction`` (docs/exports.md). The
Markdown section gives the numbers with their intervals and n, the direction of each metric, its
caveats beside it, the run's caveats in words and, where the run was checked, the policy verdict.
"""

from __future__ import annotations

from typing import Any

from culturebias.adapters.governance.exported_run import ExportedRun
from culturebias.domain.caveats import items_words
from culturebias.domain.uncertainty.interval import plural_unit

TASK = "text-generation"
MARKS = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


def _number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.4g}"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _allowed(criterion: Any) -> str:  # Any: a CriterionVerdict
    """" (only with allow_limited: the run is a limited run ...)" where the criterion needed it; '' otherwise."""
    return f" (only with allow_limited: {criterion.allowed_limited})" if criterion.allowed_limited else ""


def eval_results(run: ExportedRun) -> list[Any]:  # Any: JSON documents and their values
    from huggingface_hub import EvalResult

    s = run.summary
    out = []
    for headline in run.headline_values():
        if headline.value is None:
            continue
        args: dict[str, Any] = {"direction": headline.metric.direction_words(), "run_id": s.run_id}  # Any: JSON documents and their values
        bounds = headline.bounds()
        if bounds is not None and headline.interval is not None:
            args |= {"ci_low": bounds[0], "ci_high": bounds[1], "ci_level": headline.interval.level,
                     "n": headline.interval.n, "unit": headline.interval.unit}
        if caveats := run.caveats_of(headline.metric.name):
            args["caveats"] = "; ".join(c.short for c in caveats)
            args["caveat_kinds"] = ",".join(dict.fromkeys(c.kind for c in caveats))
        out.append(
            EvalResult(
                task_type=TASK,
                task_name=f"social bias ({run.culture})",
                dataset_type=f"culturebias/{s.benchmark}",
                dataset_name=run.title,
                dataset_config=s.benchmark,
                dataset_revision=s.data.fingerprint,
                dataset_args={"config_fingerprint": s.config_fingerprint, **({"limit": s.limit.n} if s.limit else {}),
                              "items": items_words(s)},
                metric_type=headline.metric.name,
                metric_name=headline.metric.label,
                metric_value=headline.value,
                metric_args=args,
            )
        )
    return out


def bias_section(run: ExportedRun) -> str:
    s = run.summary
    model, backend = run.model()
    lines = [
        "## Bias, Risks, and Limitations",
        "",
        f"Measured with culturebias {s.culturebias_version} on {run.title} "
        f"({run.culture}), run `{s.run_id}`, data fingerprint `{s.data.fingerprint}`, model `{model}`"
        f"{f' ({backend})' if backend else ''}.",
        "",
    ]
    if s.limit is not None:
        lines += [f"**A limited run (`--limit {s.limit.n}`): not comparable to a full one.**", ""]
    caveats = run.caveats()
    if caveats:
        lines += ["**Caveats** (what limits these numbers):", "", *(f"- {c.text}" for c in caveats), ""]
    lines += ["| metric | value | 95% interval | n | direction | caveats |", "|---|---|---|---|---|---|"]
    for h in run.headline_values():
        bounds = h.bounds()
        ci = f"{_number(bounds[0])} to {_number(bounds[1])}" if bounds else "not computed"
        n = f"{h.interval.n} {plural_unit(h.interval.unit, h.interval.n)}" if h.interval is not None else "–"
        if h.not_measured is not None:
            ci, shown = "not measured", f"not measured: {h.not_measured}"
        else:
            shown = _number(h.value)
        beside = "; ".join(c.short for c in run.caveats_of(h.metric.name)) or "–"
        lines.append(f"| {h.metric.label} | {shown} | {ci} | {n} | {h.metric.direction_words()} | {_cell(beside)} |")
    if run.verdict is not None:
        v = run.verdict
        lines += ["", f"Acceptance policy **{v.policy}**: **{MARKS[v.outcome]}** "
                      f"({v.counts.passed} pass, {v.counts.failed} fail, {v.counts.inconclusive} inconclusive; "
                      f"checked {v.checked_at}).", ""]
        allowed = [c for c in v.criteria if c.allowed_limited]
        if allowed:
            lines += [f"This verdict decided on a limited or sampled run only because the policy set `allow_limited = true` "
                      f"({len(allowed)} of {len(v.criteria)} criteria); it is not a verdict on the benchmark's full data.", ""]
        lines += [f"- {MARKS[c.outcome]}{_allowed(c)} {c.name}: {c.reason}" for c in v.criteria]
    lines += ["", "The numbers measure one benchmark's notion of social bias in one culture and language; "
                  "they do not show the absence of bias elsewhere."]
    return "\n".join(lines) + "\n"


def model_card_text(run: ExportedRun) -> str:
    from huggingface_hub import ModelCard, ModelCardData

    model, _ = run.model()
    data = ModelCardData(model_name=model, eval_results=eval_results(run), tags=["culturebias", run.summary.benchmark])
    card = ModelCard(f"---\n{data.to_yaml()}\n---\n\n# {model}\n\n{bias_section(run)}")
    return str(card)
