"""The ``identity`` and ``provenance`` properties of a scorer that settles both when it is built."""

from __future__ import annotations

from culturebias.domain.identity import ModelIdentity, ScoreProvenance


class Identified:
    """A backend holding its ``ModelIdentity`` and ``ScoreProvenance`` in ``_identity`` and ``_provenance``."""

    _identity: ModelIdentity
    _provenance: ScoreProvenance

    @property
    def identity(self) -> ModelIdentity:
        """Which model scores: backend, name, revision, tokenizer, dtype, size."""
        return self._identity

    @property
    def provenance(self) -> ScoreProvenance:
        """How its scores were computed: backend, dtype, batch size, padding, device."""
        return self._provenance
