"""The ``replay`` backend: answers produced elsewhere, read from a JSONL file.

    --set model.backend=replay --set model.path=answers.jsonl

One JSON object per line::

    {"sample_id": "age-001a-002-amb-bsd", "prompt_id": 1, "permutation": 0, "raw": "B"}

``sample_id`` is the dataset's own id (KoBBQ's sample_id; CBBQ's
``{category}-{amb|dis}-{example_id}``), ``prompt_id`` KoBBQ's 1–5 or CBBQ's
``q``/``q_if``/``q_if_cot``, ``permutation`` 0–2 the cyclic shift applied to
the dataset's option order (option i shown at position (i + k) mod 3; with
``protocol.permutation_scheme=circulant``, the KoBBQ authors' k-th order), and
``raw`` the model's reply, post-processed like any generation. A record may
carry ``reasoning`` (the first turn of CBBQ Q+IF+CoT); it is never scored.

This is how outputs of closed models are scored, and how metrics are tested.
The backend only generates: its scorer, templater and pseudo-scorer raise
``CapabilityError``. A request whose answer the file lacks fails the run with
an error naming the first missing key; a malformed or duplicate line is a
``DataError`` naming file and line.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from culturebias.adapters.datasets.jsonl_rows import read_jsonl
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.errors import CapabilityError, ConfigError, DataError, ReplayMissingError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import GenerationRequest, GenerationResult

REQUIRED = ("sample_id", "prompt_id", "permutation", "raw")


def _permutation(value: object, path: Path, line: int) -> int:
    try:
        permutation = int(str(value).strip())
    except ValueError:
        raise DataError(f"permutation must be 0, 1 or 2, got {value!r}", file=str(path), row=line, field="permutation") from None
    if permutation not in (0, 1, 2):
        raise DataError(f"permutation must be 0, 1 or 2, got {value!r}", file=str(path), row=line, field="permutation")
    return permutation


def read_answers(path: Path) -> dict[tuple[str, str, int], dict[str, str]]:
    """(sample_id, prompt_id, permutation) → {"raw": ..., "reasoning": ...}."""
    answers: dict[tuple[str, str, int], dict[str, str]] = {}
    first_line: dict[tuple[str, str, int], int] = {}
    for line_number, record in read_jsonl(path, REQUIRED):
        if not isinstance(record["raw"], str):
            raise DataError("raw must be a string", file=str(path), row=line_number, field="raw")
        key = (str(record["sample_id"]).strip(), str(record["prompt_id"]).strip(), _permutation(record["permutation"], path, line_number))
        if key in answers:
            raise DataError(
                f"duplicate answer for sample_id={key[0]!r}, prompt_id={key[1]!r}, permutation={key[2]} "
                f"(first at line {first_line[key]})",
                file=str(path),
                row=line_number,
            )
        first_line[key] = line_number
        reasoning = record.get("reasoning")
        answers[key] = {"raw": record["raw"], "reasoning": reasoning if isinstance(reasoning, str) else ""}
    return answers


class ReplayGenerator:
    def __init__(self, path: Path):
        self.path = path
        self._answers = read_answers(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        self._identity = ModelIdentity(
            backend="replay",
            model=path.name,
            revision=digest,
            kind="replay",
            description=f"answers replayed from {path} ({len(self._answers)} answers)",
        )

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def __len__(self) -> int:
        return len(self._answers)

    def generate(self, requests: Sequence[GenerationRequest], progress=None) -> list[GenerationResult]:
        out: list[GenerationResult] = []
        missing: list[AnswerKey] = []
        for request in requests:
            if request.key is None:
                raise CapabilityError("replay", "answers to requests without a question key", "only keyed BBQ questions can be replayed")
            key = AnswerKey.decode(request.key)
            record = self._answers.get((key.sample_id, key.prompt_id, key.permutation))
            if record is None:
                missing.append(key)
                continue
            out.append(GenerationResult(record["raw"] if key.turn == "answer" else record["reasoning"]))
        if missing:
            first = missing[0]
            raise ReplayMissingError(
                f"no answer for {first._replace(turn='answer').describe()}"
                + (f" ({len(missing)} answers of this batch are missing)" if len(missing) > 1 else ""),
                file=str(self.path),
            )
        if progress is not None:
            progress.advance(len(requests))
        return out


class ReplayBackend:
    def __init__(self, path: Path):
        self.path = path
        self._generator: ReplayGenerator | None = None

    def generator(self) -> ReplayGenerator:
        if self._generator is None:
            self._generator = ReplayGenerator(self.path)
        return self._generator

    def scorer(self):
        raise CapabilityError(
            "replay", "log-likelihood scoring", "a replay file holds generated answers; use protocol.mode=generate (or auto)"
        )

    def templater(self):
        raise CapabilityError("replay", "a chat template", "replayed answers were produced elsewhere")

    def pseudo_scorer(self):
        raise CapabilityError("replay", "pseudo-log-likelihood scoring")


def create_backend(settings, cache_dir: Path) -> ReplayBackend:
    if not settings.path:
        raise ConfigError("model.backend=replay needs model.path=FILE, a JSONL file of answers (see culturebias.adapters.replay)")
    path = Path(settings.path).expanduser()
    if not path.is_file():
        raise ConfigError(f"replay file {path} does not exist")
    return ReplayBackend(path)
