"""KoBBQ (Korea): its descriptor, the whole benchmark as the registry lists it."""

from __future__ import annotations

from culturebias.adapters.plugins.descriptors import BenchmarkDescriptor

KOBBQ = BenchmarkDescriptor(
    name="kobbq",
    title="KoBBQ",
    culture="Korea",
    language="Korean",
    service="culturebias.application.kobbq.service:KoBBQService",
    options="culturebias.domain.kobbq.options:KoBBQOptions",
    dataset_source="culturebias.adapters.kobbq.files:KoBBQFiles",
    summary="culturebias.domain.kobbq.summary:KoBBQSummary",
    report="culturebias.adapters.reports.bbq_report:BBQReport",
    headlines="culturebias.domain.kobbq.headlines:HEADLINES",
    validity="culturebias.domain.kobbq.headlines:VALIDITY",
    compare="culturebias.domain.kobbq.comparison:compare_kobbq",
    comparison="culturebias.domain.kobbq.comparison:KoBBQComparison",
    comparison_sections="culturebias.adapters.reports.comparison_bbq:kobbq_sections",
    unit_values="culturebias.domain.kobbq.units:kobbq_unit_values",
    strata="culturebias.domain.kobbq.strata:STRATA",
    export_meta="culturebias.domain.bbq.export_columns:BBQ_EXPORT_META",
    data_licence="MIT",
    bundled_data=True,
    expander="culturebias.application.kobbq.expand:expand_kobbq",
)
