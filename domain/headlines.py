"""A benchmark's headline metrics: declared once, with their meaning, unit, range and direction.

Each benchmark declares a tuple of ``HeadlineMetric`` (``domain/<benchmark>/headlines.py``)
and its descriptor carries it. Leaderboards, ``run.repeats``, reports, comparisons and
acceptance policies read a headline through ``value_of`` / ``interval_of`` and judge
"better" through ``direction``: nothing else in the framework knows where a benchmark
keeps its numbers.

A headline's ``value`` and ``interval`` are dotted paths into the typed summary
(``metrics.overall.diff_bias_amb.mean``); a dict is entered by its key
(``metrics.gender.female.bias_ratio``). ``path_problems`` checks a path against the
summary *model* before any run, so a plugin that declares a headline its summary
does not have is refused at registration.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from culturebias.domain.uncertainty.interval import Interval, plural_unit
from culturebias.domain.validity import failed_rules, rule_reason

Direction = Literal["lower", "higher", "closer"]
DIRECTION_WORDS: dict[Direction, str] = {
    "lower": "lower is better",
    "higher": "higher is better",
    "closer": "closer to {target} is better",
}


class Planning(BaseModel):
    """What a sample-size plan assumes of a headline (``culturebias plan --policy``; domain/policy/power.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sd: float = Field(gt=0, description="The standard deviation one resampling unit contributes (SE = sd / sqrt(n)).")
    margin: float = Field(gt=0, description="d: the distance of the true value from a threshold the plan must resolve.")
    source: str = Field(description="Where sd and d come from, in words.")


class HeadlineMetric(BaseModel):
    """One number a benchmark is judged by."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Key of the metric in leaderboards, repeats, policies (e.g. 'diff_bias_amb').")
    label: str = Field(description="The metric in words, as a report shows it.")
    value: str = Field(description="Dotted path of the value in the typed summary.")
    direction: Direction = Field(description="Which way is better: lower, higher, or closer to `target`.")
    target: float | None = Field(default=None, description="The ideal value of a 'closer' metric (diff-bias 0, SS 50).")
    unit: str = Field(default="", description="Unit of the value ('' for a plain ratio or score).")
    low: float | None = Field(default=None, description="Smallest value the metric can take (None: unbounded).")
    high: float | None = Field(default=None, description="Largest value the metric can take (None: unbounded).")
    interval: str | None = Field(default=None, description="Dotted path of its 95% interval in the summary, if any.")
    meaning: str = Field(default="", description="One sentence on what a larger value means.")
    planning: Planning | None = Field(
        default=None,
        description="The planning sd and margin of a sample-size plan; None: half the range as sd, 5 % of it as margin.",
    )
    sentence: str = Field(
        default="",
        description="The reading of one value in plain words, for the report's headline card: a template with "
        "{value}, {low}, {high}, {n}, {unit} (the interval's resampling unit), {points} (|value| x 100), "
        "{low_points}, {high_points} (x 100) and {more} ('more' or 'less' by the value's sign). "
        "Empty: '<label> is <value> (95% CI ...)' and the meaning.",
    )

    def model_post_init(self, __context: object) -> None:
        if (self.direction == "closer") != (self.target is not None):
            raise ValueError(f"headline {self.name!r}: a target is given exactly when the direction is 'closer'")

    def direction_words(self) -> str:
        return DIRECTION_WORDS[self.direction].format(target=_number(self.target))

    def reading(self, value: float, interval: Interval | None) -> str:
        """One sentence on ``value`` in plain words, with its interval and n where the run computed them."""
        points = "{points}" in self.sentence
        digits = _digits(value, *((interval.low, interval.high) if interval is not None else ()))
        ci = ""
        if interval is not None and interval.low is not None and interval.high is not None:
            low_, high_ = (
                (f"{interval.low * 100:.0f}", f"{interval.high * 100:.0f}")
                if points
                else (_plain(interval.low, self.unit, digits), _plain(interval.high, self.unit, digits))
            )
            ci = f"95% CI {low_} to {high_}, {interval.n:,} {_units(interval)}"
        if not self.sentence:
            label = self.label if self.label[1:2].isupper() else f"{self.label[:1].upper()}{self.label[1:]}"  # iCAT stays
            head = f"{label} is {_plain(value, self.unit, digits)}"
            head += f" ({ci})" if ci else ""
            return f"{head}: {self.meaning}." if self.meaning else f"{head}."
        low = interval.low if interval is not None and interval.low is not None else math.nan
        high = interval.high if interval is not None and interval.high is not None else math.nan
        filled = self.sentence.format(
            value=_plain(value, self.unit, digits),
            low=_plain(low, self.unit, digits),
            high=_plain(high, self.unit, digits),
            n=f"{interval.n:,}" if interval is not None else "?",
            unit=_units(interval) if interval is not None else "units",
            points=f"{abs(value) * 100:.0f}",
            low_points=f"{low * 100:.0f}",
            high_points=f"{high * 100:.0f}",
            more="more" if value >= 0 else "less",
        )
        return f"{filled} ({ci})." if ci else f"{filled}."

    def badness(self, value: Any) -> Any:  # a float, or an array of them (the paired bootstrap's resamples)
        """How far from ideal a value is, in the metric's own unit: larger is worse."""
        if self.direction == "lower":
            return value
        if self.direction == "higher":
            return -value
        assert self.target is not None
        return abs(value - self.target)

    def better(self, a: float, b: float) -> bool:
        """Whether ``a`` is strictly better than ``b``."""
        return bool(self.badness(a) < self.badness(b))


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _plain(value: float, unit: str, digits: int = 3) -> str:
    """A value as a sentence gives it, with its unit after it."""
    if not math.isfinite(value):
        return "undefined"
    return f"{value:.{digits}f} {unit}".rstrip()


def _digits(*values: float | None) -> int:
    """One decimal where a number of the sentence reaches 10 (a 0-100 score), else three, for all of them alike."""
    return 1 if any(v is not None and math.isfinite(v) and abs(v) >= 10 for v in values) else 3


def _units(interval: Interval) -> str:
    return plural_unit(interval.unit, interval.n)


_MISSING = object()


def _step(node: object, part: str) -> object:
    if node is None:
        return None
    if isinstance(node, Mapping):
        return node.get(part)
    return getattr(node, part, _MISSING)


def read_path(summary: object, path: str) -> object:
    """The object at a dotted path (None where an optional part is absent)."""
    node = summary
    for part in path.split("."):
        node = _step(node, part)
        if node is _MISSING:
            raise KeyError(f"{type(summary).__name__} has no {path!r} (no field {part!r})")
    return node


def value_of(summary: object, metric: HeadlineMetric) -> float | None:
    """The metric's value in a summary; None where it is undefined or not finite."""
    value = read_path(summary, metric.value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def interval_of(summary: object, metric: HeadlineMetric) -> Interval | None:
    """The metric's stored interval; None where the benchmark or the run computed none."""
    if metric.interval is None:
        return None
    found = read_path(summary, metric.interval)
    return found if isinstance(found, Interval) else None


def headline_values(summary: object, metrics: Sequence[HeadlineMetric]) -> dict[str, float | None]:
    """Every headline by name, in declaration order (absent keys of optional blocks are left out)."""
    out: dict[str, float | None] = {}
    for metric in metrics:
        try:
            out[metric.name] = value_of(summary, metric)
        except KeyError:
            continue
    return out


# --- checking a path against the summary model, before any run ---------------------------------


def _unwrap(annotation: object) -> list[object]:
    """The concrete types an annotation admits (Optional/Union/Annotated unwrapped)."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [t for arg in get_args(annotation) for t in _unwrap(arg) if t is not type(None)]
    return [annotation]


def _child(annotation: object, part: str) -> list[object]:
    # ``Any`` below is a value read from annotations (an untyped dict or property), not an annotation.
    found: list[object] = []
    for candidate in _unwrap(annotation):
        origin = get_origin(candidate)
        if origin in (dict, Mapping) or candidate is dict:
            args = get_args(candidate)
            found.append(args[1] if len(args) == 2 else Any)  # Any: typing introspection of the summary's field types
        elif isinstance(candidate, type) and issubclass(candidate, BaseModel):
            field = candidate.model_fields.get(part)
            if field is not None:
                found.append(field.annotation)
            elif isinstance(getattr(candidate, part, None), property):
                hints = typing.get_type_hints(getattr(candidate, part).fget)
                found.append(hints.get("return", Any))  # Any: typing introspection of the summary's field types
        elif candidate is Any:  # Any: typing introspection of the summary's field types
            found.append(Any)  # Any: typing introspection of the summary's field types
    return found


def path_problems(model: type[BaseModel], path: str, want: Literal["number", "interval"]) -> str | None:
    """Why ``path`` cannot hold a ``want`` in summaries of ``model``; None when it can."""
    annotations: list[object] = [model]
    walked: list[str] = []
    for part in path.split("."):
        walked.append(part)
        annotations = [child for a in annotations for child in _child(a, part)]
        if not annotations:
            return f"{model.__name__} has no field {'.'.join(walked)!r}"
    leaves = [t for a in annotations for t in _unwrap(a)]
    if any(t is Any for t in leaves):  # Any: typing introspection of the summary's field types
        return None
    ok = (
        any(isinstance(t, type) and issubclass(t, Interval) for t in leaves)
        if want == "interval"
        else any(t in (int, float) for t in leaves)
    )
    return None if ok else f"{model.__name__}.{path} is not a {want} (it is {', '.join(map(_name, leaves))})"


def _name(annotation: object) -> str:
    return getattr(annotation, "__name__", str(annotation))


def headline_problems(model: type[BaseModel], metrics: Sequence[HeadlineMetric]) -> list[str]:
    """Every declared headline the summary model cannot hold (empty: all can)."""
    problems = []
    names = [m.name for m in metrics]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"headline {name!r} is declared twice")
    for metric in metrics:
        checks: list[tuple[str | None, Literal["number", "interval"]]] = [
            (metric.value, "number"),
            (metric.interval, "interval"),
        ]
        for path, want in checks:
            if path is not None and (problem := path_problems(model, path, want)) is not None:
                problems.append(f"headline {metric.name!r}: {problem}")
    return problems


class HeadlineValue(BaseModel):
    """One headline of one run: its value and, where the run computed one, its interval."""

    model_config = ConfigDict(extra="forbid")

    value: float | None = Field(description="The metric's value; null where it is undefined for this run.")
    interval: Interval | None = Field(default=None, description="Its stored 95% interval, if the run computed one.")
    not_measured: str | None = Field(
        default=None,
        description="Why the headline is not measured on this run (a failed validity rule, PROTOCOLS §6): value and "
        "interval are then null here (they stay in the run's summary.json).",
    )


def headline_entries(summary: object, metrics: Sequence[HeadlineMetric]) -> dict[str, HeadlineValue]:
    """Every headline of a run with its interval, in declaration order (absent optional blocks left out)."""
    out: dict[str, HeadlineValue] = {}
    for metric in metrics:
        failed = failed_rules(summary, metric.name)
        if failed:  # shown as not measured, never as a result (PROTOCOLS §6)
            out[metric.name] = HeadlineValue(value=None, not_measured="; ".join(rule_reason(r) for r in failed))
            continue
        try:
            out[metric.name] = HeadlineValue(value=value_of(summary, metric), interval=interval_of(summary, metric))
        except KeyError:
            continue
    return out
