"""The deterministic identity of one BBQ question, carried by generation requests.

A replay backend looks answers up by it, so it is built from what a user's
answer file names: the dataset's sample id, the prompt id (KoBBQ ``1``–``5``,
CBBQ ``q``/``q_if``/``q_if_cot``) and the option permutation 0–2; ``turn``
separates the reasoning turn of a two-turn prompt from the answer turn. On the
request it is a generic ``RequestKey``: these three fields, answered by the
record's ``raw`` field (the answer turn) or ``reasoning`` field (the reasoning turn).
"""

from __future__ import annotations

from typing import NamedTuple

from culturebias.domain.requests import KeyValue, RequestKey

# The answer file's field that holds each turn's reply.
ANSWER_FIELD = {"answer": "raw", "reasoning": "reasoning"}
TURN = {field: turn for turn, field in ANSWER_FIELD.items()}


class AnswerKey(NamedTuple):
    sample_id: str
    prompt_id: str
    permutation: int
    turn: str = "answer"

    def request_key(self) -> RequestKey:
        fields: dict[str, KeyValue] = {"sample_id": self.sample_id, "prompt_id": self.prompt_id, "permutation": self.permutation}
        return RequestKey.of(fields, answer=ANSWER_FIELD.get(self.turn, self.turn))

    def encode(self) -> str:
        return self.request_key().encode()

    @staticmethod
    def decode(text: str) -> "AnswerKey":
        key = RequestKey.decode(text)
        fields = dict(key.fields)
        return AnswerKey(str(fields["sample_id"]), str(fields["prompt_id"]), int(fields["permutation"]), TURN.get(key.answer, key.answer))

    def describe(self) -> str:
        text = f"sample_id={self.sample_id!r}, prompt_id={self.prompt_id!r}, permutation={self.permutation}"
        return text if self.turn == "answer" else f"{text}, turn={self.turn!r}"
