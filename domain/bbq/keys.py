"""The deterministic identity of one BBQ question, carried by generation requests.

A replay backend looks answers up by it, so it is built from what a user's
answer file names: the dataset's sample id, the prompt id (KoBBQ ``1``–``5``,
CBBQ ``q``/``q_if``/``q_if_cot``) and the option permutation 0–2; ``turn``
separates the reasoning turn of a two-turn prompt from the answer turn.
"""

from __future__ import annotations

import json
from typing import NamedTuple


class AnswerKey(NamedTuple):
    sample_id: str
    prompt_id: str
    permutation: int
    turn: str = "answer"

    def encode(self) -> str:
        return json.dumps([self.sample_id, self.prompt_id, self.permutation, self.turn], ensure_ascii=False)

    @staticmethod
    def decode(text: str) -> "AnswerKey":
        sample_id, prompt_id, permutation, turn = json.loads(text)
        return AnswerKey(str(sample_id), str(prompt_id), int(permutation), str(turn))

    def describe(self) -> str:
        text = f"sample_id={self.sample_id!r}, prompt_id={self.prompt_id!r}, permutation={self.permutation}"
        return text if self.turn == "answer" else f"{text}, turn={self.turn!r}"
