"""Every registered model backend runs the port contracts its capabilities promise (culturebias.testing.backend_factories.BACKENDS)."""

from __future__ import annotations


import pytest

from culturebias.bootstrap.registry import registry
from culturebias.domain.errors import PluginError
from culturebias.testing import backend_factories


def _registered():
    return [d for d in registry().backends.all() if not isinstance(d, PluginError)]


@pytest.mark.parametrize("backend", registry().backends.names())
def test_every_registered_backend_has_contract_factories_for_its_capabilities(backend):
    factories = backend_factories
    descriptor = registry().backend(backend)
    assert backend in factories.BACKENDS, (
        f"backend {backend!r} is registered but has no contract factories: add it to BACKENDS in culturebias/testing/backend_factories.py"
    )
    ports = factories.BACKENDS[backend]
    promised = {factories.CAPABILITY_PORTS[c] for c in descriptor.capabilities if c in factories.CAPABILITY_PORTS}
    given = {port for port in factories.CAPABILITY_PORTS.values() if getattr(ports, port) is not None}
    assert given == promised, f"backend {backend!r} promises {sorted(promised)} (its capabilities) but has factories for {sorted(given)}"


def test_contract_factories_name_only_registered_backends():
    factories = backend_factories
    registered = {d.name for d in _registered()}
    assert set(factories.BACKENDS) <= registered, "a contract factory names a backend that is not registered"
    assert not set(factories.DOUBLES) & registered, "a registered backend belongs in BACKENDS, not DOUBLES"


def test_the_contract_suites_run_every_registered_backend_they_cover():
    factories = backend_factories
    for descriptor in _registered():
        for capability, table in (("loglikelihood", factories.SCORERS), ("generate", factories.GENERATORS), ("pseudo_loglikelihood", factories.PSEUDO_SCORERS)):
            assert (descriptor.name in table) == (capability in descriptor.capabilities), (descriptor.name, capability)
