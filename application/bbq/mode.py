"""Which answering mode a BBQ run uses (PROTOCOLS §2, answering modes), and why.

``auto`` picks **generate** for a model with a chat template (an
instruction-tuned model answers in words, as both papers had their models do)
and **likelihood** for a base model (option letters scored as continuations).
Capabilities then decide: a chat model whose backend cannot generate is
scored, a masked LM (encoder) answers in ``masked`` mode, and a base model
whose backend cannot score continuations (a replay file, a chat API without
log-probabilities) generates. Only a
``CapabilityError`` changes the method: any other failure of a check (a server
that cannot be reached) propagates and stops the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from culturebias.application.context import RunContext
from culturebias.domain.bbq.options import AnswerMode, Mode
from culturebias.domain.errors import CapabilityError, ConfigError

PAPERS_GENERATED = (
    "both papers (KoBBQ, CBBQ) had their models generate an answer; scoring the options (likelihood of the "
    "option letters for base models, pseudo-log-likelihood for encoders) is this project's alternative, "
    "not the papers' method"
)


@dataclass(frozen=True)
class ModeChoice:
    mode: AnswerMode
    requested: Mode
    reason: str


def _can_score(ctx: RunContext) -> CapabilityError | None:
    try:
        ctx.scorer().check_loglikelihood()
    except CapabilityError as missing:
        return missing
    return None


def _can_generate(ctx: RunContext) -> CapabilityError | None:
    try:
        ctx.generator()
    except CapabilityError as missing:
        return missing
    return None


def _is_masked(ctx: RunContext) -> bool:
    try:
        ctx.pseudo_scorer()
    except CapabilityError:
        return False
    return True


def choose_mode(ctx: RunContext, requested: Mode, chat: bool, needs_generator: bool = False) -> ModeChoice:
    """The mode a run uses; checks the capabilities it needs before anything runs."""
    if requested == "generate":
        ctx.generator()
        return ModeChoice("generate", requested, "protocol.mode=generate")
    if requested == "masked":
        if needs_generator:
            raise ConfigError("protocol.mode=masked: an encoder cannot write Q+IF+CoT's reasoning; drop q_if_cot from protocol.condition")
        ctx.pseudo_scorer()
        return ModeChoice("masked", requested, "protocol.mode=masked")
    if needs_generator:
        ctx.generator()
    if requested == "likelihood":
        ctx.scorer().check_loglikelihood()
        return ModeChoice("likelihood", requested, "protocol.mode=likelihood")
    if chat:
        missing = _can_generate(ctx)
        if missing is None:
            return ModeChoice("generate", requested, "protocol.mode=auto: the model has a chat template (instruction-tuned)")
        ctx.scorer().check_loglikelihood()
        ctx.log.warning("protocol.mode=auto: a chat model that cannot generate is scored", reason=str(missing))
        return ModeChoice(
            "likelihood", requested, f"protocol.mode=auto: the model has a chat template but cannot generate ({missing})"
        )
    missing = _can_score(ctx)
    if missing is None:
        return ModeChoice("likelihood", requested, "protocol.mode=auto: a base model (no chat template)")
    if not needs_generator and _is_masked(ctx):
        return ModeChoice("masked", requested, "protocol.mode=auto: a masked LM (encoder), options scored by pseudo-log-likelihood")
    ctx.generator()
    ctx.log.warning("protocol.mode=auto: answering by generation", reason=str(missing))
    return ModeChoice(
        "generate", requested, f"protocol.mode=auto: no chat template, but the backend cannot score continuations ({missing})"
    )
