"""Perplexities a model produced elsewhere: TWBias's score replay (PROTOCOLS §1.3–§1.6).

The TWBias authors released, per model, each sentence's ``origin_ppl`` and the
``replace_ppl`` of the replaced sentence their code chose; a backend that holds
such files offers them through this port, and the service scores them with the
same outlier rule, test and effect size as perplexities it computed itself.
"""

from __future__ import annotations

from typing import Mapping, Protocol, runtime_checkable

from culturebias.domain.identity import ModelIdentity
from culturebias.domain.twbias.model import TargetGroup


@runtime_checkable
class StoredPerplexities(Protocol):
    @property
    def identity(self) -> ModelIdentity: ...

    def perplexities(
        self, origin: TargetGroup, reference: TargetGroup, prompt_type: str
    ) -> tuple[str, Mapping[str, tuple[float, float]]]:
        """``(file, {sentence id: (origin_ppl, replace_ppl)})`` of one specification and prompt type.

        ``file`` names where the values were read (for errors); a specification or
        prompt type the store lacks raises ``MissingDataError``.
        """
        ...
