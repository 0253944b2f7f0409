"""The ``replay`` backend: answers produced elsewhere, read from a JSONL file.

    --set model.backend=replay --set model.path=answers.jsonl

One JSON object per line: the fields that name the question asked, the reply in
``raw``, and the reply of any other turn in its own field. The question's
fields are those of the protocol's request keys (``GenerationRequest.key``, a
``RequestKey``); for KoBBQ and CBBQ (``domain/bbq/keys.py``)::

    {"sample_id": "age-001a-002-amb-bsd", "prompt_id": 1, "permutation": 0, "raw": "B"}

``sample_id`` is the dataset's own id (KoBBQ's sample_id; CBBQ's
``{category}-{amb|dis}-{example_id}``), ``prompt_id`` KoBBQ's 1–5 or CBBQ's
``q``/``q_if``/``q_if_cot``, ``permutation`` 0–2 the cyclic shift applied to
the dataset's option order (option i shown at position (i + k) mod 3; with
``protocol.permutation_scheme=circulant``, the KoBBQ authors' k-th order), and
``raw`` the model's reply, post-processed like any generation. A record may
carry ``reasoning`` (the first turn of CBBQ Q+IF+CoT); it is never scored.

A record answers a request when it holds every field of the request's key
with the same value, compared as text (``1`` and ``"1"`` are equal); other
fields are ignored. A reply ends before the request's first stop string, as
any generator's does.

This is how outputs of closed models are scored, and how metrics are tested.
The backend only generates: its scorer, templater and pseudo-scorer raise
``CapabilityError``. A request whose answer the file lacks fails the run with
an error naming the first missing key; a file that is not UTF-8 (nor Unicode
with a byte order mark, see ``adapters/datasets/text_files.py``), a malformed
line, a record lacking a key field or holding a list or object in one, and two
records answering one key are ``DataError``s naming file and line.

A FOLDER as ``model.path`` is one model's TWBias results (the authors'
per-sentence perplexity CSVs): a score replay for TWBias, see
``adapters/twbias/replay.py``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Sequence

from culturebias.adapters.datasets.jsonl_rows import read_jsonl
from culturebias.domain.model_options import ModelOptions, own_options
from culturebias.adapters.twbias.replay import TWBiasReplayBackend, is_result_folder
from culturebias.domain.errors import CapabilityError, ConfigError, DataError, ReplayMissingError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import GenerationRequest, GenerationResult, KeyValue, RequestKey, key_text
from culturebias.ports.progress import ProgressTask
from culturebias.ports.scoring import LoglikelihoodScorer, PseudoLoglikelihoodScorer
from culturebias.ports.templating import ChatTemplater

REPLY = "raw"  # the field every record has: the reply to the (last) turn


class ReplayOptions(ModelOptions):
    """``model.*`` options of the ``replay`` backend: ``model.path`` is the JSONL file of answers."""

    backend: str = "replay"


def _shown_like(template: RequestKey, texts: tuple[str, ...]) -> RequestKey:
    """A record's key values typed like the request's, so that errors name keys the way requests do."""
    values: list[KeyValue] = []
    for (_, sample), text in zip(template.fields, texts):
        values.append(int(text) if isinstance(sample, int) and text.lstrip("-").isdigit() else text)
    return RequestKey(tuple(zip(template.names, values)), template.answer)


class AnswerFile:
    """The records of a replay file, indexed (once per set of key field names) by the fields requests ask by."""

    def __init__(self, path: Path):
        self.path = path
        self._records: list[tuple[int, dict[str, Any]]] = []  # Any: JSON records
        for line, record in read_jsonl(path, (REPLY,)):
            if not isinstance(record[REPLY], str):
                raise DataError(f"{REPLY} must be a string", file=str(path), row=line, field=REPLY)
            self._records.append((line, record))
        self._indexes: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {}

    def __len__(self) -> int:
        return len(self._records)

    def _text(self, record: dict[str, Any], name: str, line: int) -> str:  # Any: a JSON record
        if name not in record:
            raise DataError(f"missing field {name!r}", file=str(self.path), row=line, field=name)
        value = record[name]
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise DataError(f"{name} must be text or a number, got {value!r}", file=str(self.path), row=line, field=name)
        return key_text(value)

    def _index(self, template: RequestKey) -> dict[tuple[str, ...], int]:
        names = template.names
        if names not in self._indexes:
            index: dict[tuple[str, ...], int] = {}
            for position, (line, record) in enumerate(self._records):
                texts = tuple(self._text(record, name, line) for name in names)
                if texts in index:
                    first = self._records[index[texts]][0]
                    raise DataError(
                        f"duplicate answer for {_shown_like(template, texts).describe()} (first at line {first})",
                        file=str(self.path),
                        row=line,
                    )
                index[texts] = position
            self._indexes[names] = index
        return self._indexes[names]

    def reply(self, key: RequestKey) -> str | None:
        """The reply in the record answering ``key`` (empty when that record lacks the turn), or None without one."""
        position = self._index(key).get(key.texts())
        if position is None:
            return None
        reply = self._records[position][1].get(key.answer)
        return reply if isinstance(reply, str) else ""


def _cut_at_stop(text: str, stop: Sequence[str]) -> str:
    cut = min((text.find(s) for s in stop if s and s in text), default=-1)
    return text[:cut] if cut >= 0 else text


class ReplayGenerator:
    def __init__(self, path: Path):
        self.path = path
        self._answers = AnswerFile(path)
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

    def generate(self, requests: Sequence[GenerationRequest], progress: ProgressTask | None = None) -> list[GenerationResult]:
        out: list[GenerationResult] = []
        missing: list[RequestKey] = []
        for request in requests:
            if request.key is None:
                raise CapabilityError(
                    "replay", "answers to requests without a question key", "only requests with a GenerationRequest.key can be replayed"
                )
            key = RequestKey.decode(request.key)
            reply = self._answers.reply(key)
            if reply is None:
                missing.append(key)
                continue
            out.append(GenerationResult(_cut_at_stop(reply, request.params.stop)))
        if missing:
            raise ReplayMissingError(
                f"no answer for {missing[0].describe()}"
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

    def scorer(self) -> LoglikelihoodScorer:
        raise CapabilityError(
            "replay", "log-likelihood scoring", "a replay file holds generated answers; use protocol.mode=generate (or auto)"
        )

    def templater(self) -> ChatTemplater:
        raise CapabilityError("replay", "a chat template", "replayed answers were produced elsewhere")

    def pseudo_scorer(self) -> PseudoLoglikelihoodScorer:
        raise CapabilityError("replay", "pseudo-log-likelihood scoring")


def check_replay_path(options: ReplayOptions, cache_dir: Path | None = None) -> Path:
    """``model.path``: an existing JSONL file of answers, or a folder of TWBias result CSVs (ConfigError otherwise)."""
    if not options.path:
        raise ConfigError(
            "model.backend=replay needs model.path=FILE, a JSONL file of answers, or model.path=DIR, one model's "
            "folder of TWBias result CSVs (see culturebias.adapters.replay.backend)"
        )
    path = Path(options.path).expanduser()
    if path.is_dir() and not is_result_folder(path):
        raise ConfigError(
            f"replay folder {path} holds no TWBias result CSVs (<Origin>_<T-code>/*_output_<k>.csv); "
            "model.path is a JSONL file of answers or one model's folder of TWBias results"
        )
    if not path.exists():
        raise ConfigError(f"replay file {path} does not exist")
    return path


def create_backend(options: ModelOptions, cache_dir: Path) -> ReplayBackend | TWBiasReplayBackend:
    path = check_replay_path(own_options(options, ReplayOptions))
    return TWBiasReplayBackend(path) if path.is_dir() else ReplayBackend(path)
