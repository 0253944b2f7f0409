"""Contract of what the application reads about a port besides its calls (``ports/described.py``,
``ports/model_backend.py``): every model port says which model it stands for, a scorer how its scores
were computed, and an optional account (a probe's findings, a template's use) has its declared type.

The application checks these with ``isinstance`` against the runtime-checkable protocols, never ``getattr``:
a port that has the member under another type would be read wrongly, so the suite reads each one.
A plugin runs it on its own ports by overriding ``made``: a fixture giving ``(kind, port)`` with kind
``scorer``, ``generator`` or ``pseudo_scorer``.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from culturebias.domain.chat_template_use import ChatTemplateUse
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.model_options import ModelOptions
from culturebias.ports.described import Described, Identified, ProbeReporting, TemplateAccounting
from culturebias.ports.model_backend import Configured, ModelBackend, PlanTemplating, Tokenizing
from culturebias.ports.templating import ChatTemplater
from culturebias.testing import backend_factories

TABLES = {"scorer": backend_factories.SCORERS, "generator": backend_factories.GENERATORS,
          "pseudo_scorer": backend_factories.PSEUDO_SCORERS}
PORTS = [(kind, name) for kind, table in TABLES.items() for name in sorted(table)]


@pytest.fixture(params=PORTS, ids=[f"{name}-{kind}" for kind, name in PORTS])
def made(request):
    kind, name = request.param
    return kind, TABLES[kind][name]()


def test_every_model_port_is_identified(made):
    _, port = made
    assert isinstance(port, Identified)
    assert isinstance(port.identity, ModelIdentity) and port.identity.backend


def test_a_scorer_describes_how_its_scores_were_computed(made):
    kind, port = made
    if kind == "generator":
        pytest.skip("a generator's replies carry no numeric provenance")
    assert isinstance(port, Described)
    assert isinstance(port.provenance, ScoreProvenance) and port.provenance.backend == port.identity.backend


def test_a_probe_report_is_a_mapping_of_texts(made):
    _, port = made
    if not isinstance(port, ProbeReporting):
        pytest.skip("the port reports no probe")
    findings = port.probe_findings
    assert findings is None or (isinstance(findings, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in findings.items()))


def check_backend(backend: object, name: str) -> None:
    """What a plan and a run read from a backend (``ModelBackend`` and its optional capabilities), on ``backend``
    registered as ``name``: each optional capability it declares answers with its declared type."""
    assert isinstance(backend, ModelBackend)
    if isinstance(backend, Configured):
        assert isinstance(backend.options, ModelOptions) and backend.options.backend == name
    if isinstance(backend, Tokenizing):
        tokenizer = backend.tokenizer()
        assert tokenizer is None or list(tokenizer("男生", add_special_tokens=False)["input_ids"])
    if isinstance(backend, PlanTemplating):
        templater = backend.plan_templater()
        assert isinstance(templater, ChatTemplater)
        if isinstance(templater, TemplateAccounting):
            assert templater.template_use is None or isinstance(templater.template_use, ChatTemplateUse)
