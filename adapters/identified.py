"""The ``identity`` and ``provenance`` properties of a scorer that settles both when it is built."""

from __future__ import annotations

from culturebias.domain.identity import ModelIdentity, ScoreProvenance


class Identified:
    """A backend holding its ``ModelIdentity`` and ``ScoreProvenance`` in ``_identity`` and ``_provenance``."""

    _identity: ModelIdentity
    _provenance: ScoreProvenance

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    @property
    def provenance(self) -> ScoreProvenance:
        return self._provenance
