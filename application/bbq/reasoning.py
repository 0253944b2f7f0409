"""The summary block of how CBBQ's chain-of-thought reasoning was decoded."""

from __future__ import annotations

from culturebias.application.context import RunContext
from culturebias.domain.bbq.fidelity_summary import ReasoningBlock
from culturebias.domain.cbbq.options import CBBQOptions
from culturebias.domain.sampling import SamplingSettings

FIRST_TURN = (
    "the question, the IF sentence (answer without bias or stereotypes) and the paper's CoT sentence "
    "(think about how to answer in a way that avoids bias or prejudice)"
)


def reasoning_block(ctx: RunContext, options: CBBQOptions) -> ReasoningBlock | None:
    """None unless the run asks Q+IF+CoT."""
    if "q_if_cot" not in options.condition:
        return None
    params = ctx.generation_params(options.reasoning_max_new_tokens, decoding=options.reasoning_decoding)
    if options.reasoning_decoding == "greedy":
        described = "greedy"
    else:
        described = (SamplingSettings(strategy="sample") if ctx.sampling.greedy else ctx.sampling).describe()
    return ReasoningBlock(
        decoding=options.reasoning_decoding,
        sampling=described,
        seed=None if params.mode == "greedy" else params.seed,
        max_new_tokens=options.reasoning_max_new_tokens,
        first_turn=FIRST_TURN,
    )
