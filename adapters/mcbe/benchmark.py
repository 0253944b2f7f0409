"""McBE (China): its descriptor, the whole benchmark as the registry lists it."""

from __future__ import annotations

from culturebias.adapters.plugins.descriptors import BenchmarkDescriptor

MCBE = BenchmarkDescriptor(
    name="mcbe",
    title="McBE",
    culture="China",
    language="Simplified Chinese",
    service="culturebias.application.mcbe.service:McBEService",
    options="culturebias.domain.mcbe.options:McBEOptions",
    dataset_source="culturebias.adapters.mcbe.files:McBEFiles",
    summary="culturebias.domain.mcbe.summary:McBESummary",
    report="culturebias.adapters.mcbe.report:McBEReport",
    headlines="culturebias.domain.mcbe.headlines:HEADLINES",
    validity="culturebias.domain.mcbe.validity:VALIDITY",
    compare="culturebias.domain.mcbe.comparison:compare_mcbe",
    comparison="culturebias.domain.mcbe.comparison:McBEComparison",
    comparison_sections="culturebias.adapters.mcbe.comparison_report:mcbe_sections",
    strata="culturebias.domain.mcbe.strata:STRATA",
    export_meta="culturebias.domain.mcbe.export_columns:MCBE_EXPORT_META",
    presets="culturebias.domain.mcbe.presets:PRESETS",
    data_licence="CC BY 4.0 (embedded fixture written for culturebias)",
    bundled_data=True,
    data_note="embedded fixture; point data.path at the full data",
)
