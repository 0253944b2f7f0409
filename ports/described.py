"""What the application reads about a port besides its calls: who it is, where its numbers come from.

Every model port says which model it stands for (``Identified``); a port whose numbers depend on
numeric settings (a scorer) also says how they were computed (``Described``). Optional accounts a
port may give (a served scorer's probe, a templater's use of the chat template) are their own
runtime-checkable protocols: the application asks ``isinstance(port, ProbeReporting)``, never ``getattr``.
"""

from __future__ import annotations

from typing import Mapping, Protocol, runtime_checkable

from culturebias.domain.chat_template_use import ChatTemplateUse
from culturebias.domain.identity import ModelIdentity, ScoreProvenance


@runtime_checkable
class Identified(Protocol):
    """A port that says which model it stands for (the summary's ``model`` block)."""

    @property
    def identity(self) -> ModelIdentity: ...


@runtime_checkable
class Described(Protocol):
    """A port whose results carry the numeric settings they were computed with (stored with each result)."""

    @property
    def identity(self) -> ModelIdentity: ...

    @property
    def provenance(self) -> ScoreProvenance | None: ...


@runtime_checkable
class ProbeReporting(Protocol):
    """A scorer that probed its server (what the probe found goes in the summary)."""

    @property
    def probe_findings(self) -> Mapping[str, str] | None: ...


@runtime_checkable
class TemplateAccounting(Protocol):
    """A templater that says how the chat template was used (the summary's ``chat_template`` block)."""

    @property
    def template_use(self) -> ChatTemplateUse | None: ...
