"""Reference tables of the docs site, generated from the code so that nothing is written twice.

The site's pages hold markers such as ``<!-- generated:configuration -->``; the MkDocs hook
(``docs/hooks.py``) replaces each with :func:`render` at build time. The tables
(``adapters/docs/reference_pages.py``) come from the settings and options models (every key, its
type, default and description) and from the registry (benchmarks, their headline metrics,
backends and stores), the same sources ``culturebias run --help`` and ``culturebias list`` read.
"""

from __future__ import annotations

from culturebias.adapters.docs.reference_pages import ReferencePages, ReferenceSources
from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, StoreDescriptor, registry
from culturebias.bootstrap.settings_reference import setting_keys

PAGES = ReferencePages(
    ReferenceSources(
        keys=setting_keys,
        benchmarks=lambda: [b for b in registry().benchmarks.all() if isinstance(b, BenchmarkDescriptor)],
        benchmark=lambda name: registry().benchmark(name),
        backends=lambda: [b for b in registry().backends.all() if isinstance(b, BackendDescriptor)],
        stores=lambda: [s for s in registry().stores.all() if isinstance(s, StoreDescriptor)],
    )
)
configuration_reference = PAGES.configuration_reference
headline_table = PAGES.headline_table
render = PAGES.render
