"""CBBQ (China): its descriptor, the whole benchmark as the registry lists it."""

from __future__ import annotations

from culturebias.adapters.plugins.descriptors import BenchmarkDescriptor

CBBQ = BenchmarkDescriptor(
    name="cbbq",
    title="CBBQ",
    culture="China",
    language="Simplified Chinese",
    service="culturebias.application.cbbq.service:CBBQService",
    options="culturebias.domain.cbbq.options:CBBQOptions",
    dataset_source="culturebias.adapters.cbbq.files:CBBQFiles",
    summary="culturebias.domain.cbbq.summary:CBBQSummary",
    report="culturebias.adapters.reports.bbq_report:BBQReport",
    headlines="culturebias.domain.cbbq.headlines:HEADLINES",
    validity="culturebias.domain.cbbq.headlines:VALIDITY",
    compare="culturebias.domain.cbbq.comparison:compare_cbbq",
    comparison="culturebias.domain.cbbq.comparison:CBBQComparison",
    comparison_sections="culturebias.adapters.reports.comparison_bbq:cbbq_sections",
    presets="culturebias.domain.cbbq.presets:PRESETS",
    unit_values="culturebias.domain.cbbq.units:cbbq_unit_values",
    strata="culturebias.domain.cbbq.strata:STRATA",
    export_meta="culturebias.domain.bbq.export_columns:BBQ_EXPORT_META",
    data_licence="CC BY-SA 4.0",
    bundled_data=True,
    data_note="four categories bundled; point data.path at the full data",
    expander="culturebias.application.cbbq.expand:expand_cbbq",
)
