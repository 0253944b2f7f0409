"""KoBBQ's five evaluation prompts (``evaluation_prompts.tsv``), rendered as the authors do.

Each prompt is an instruction, a blank line, then labelled lines for the
context, the question and the three options, and an answer label:

    {instruction}\\n\\n{context_label}{context}\\n{question_label}{question}\\n
    {a_label}{A}\\n{b_label}{B}\\n{c_label}{C}\\n{answer_label}

The prompt text is assembled from the file's per-part columns, not from its
``prompt`` column (prompt 3's ``prompt`` column says ``{B}``/``{C}`` where the
other prompts say ``{b}``/``{c}``; the parts are what the authors' code uses).
Each prompt words the unknown option its own way; that wording replaces the
dataset's ``알 수 없음``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from culturebias.domain.bbq.model import BBQDataset, QAItem

DATASET_UNKNOWN = "알 수 없음"


@dataclass(frozen=True, slots=True)
class KoBBQPrompt:
    prompt_id: str
    instruction: str
    context_label: str
    question_label: str
    option_labels: tuple[str, str, str]
    answer_label: str
    unknown: str

    @property
    def letters(self) -> tuple[str, ...]:
        """The option letters as this prompt writes them (A/B/C or a/b/c)."""
        letters = []
        for label in self.option_labels:
            found = re.findall(r"[A-Za-z]", label)
            if not found:
                raise ValueError(f"prompt {self.prompt_id}: option label {label!r} names no letter")
            letters.append(found[-1])
        return tuple(letters)

    def render(self, context: str, question: str, options: tuple[str, ...]) -> str:
        if len(options) != len(self.option_labels):
            raise ValueError(f"prompt {self.prompt_id} shows {len(self.option_labels)} options, got {len(options)}")
        lines = [self.context_label + context, self.question_label + question]
        lines += [label + option for label, option in zip(self.option_labels, options)]
        return self.instruction + "\n\n" + "\n".join(lines) + "\n" + self.answer_label


@dataclass(frozen=True)
class KoBBQDataset(BBQDataset):
    """KoBBQ samples and the evaluation prompts they are asked with.

    ``reference``: items of a second data set in the same format (e.g. a
    machine-translated BBQ), asked alongside for the rank-sum tests only.
    """

    prompts: dict[str, KoBBQPrompt] = field(default_factory=dict)
    reference: tuple[QAItem, ...] = ()
