"""TWBias (Taiwan): its descriptor, the whole benchmark as the registry lists it."""

from __future__ import annotations

from culturebias.adapters.plugins.descriptors import BenchmarkDescriptor

TWBIAS = BenchmarkDescriptor(
    name="twbias",
    title="TWBias",
    culture="Taiwan",
    language="Traditional Chinese",
    service="culturebias.application.twbias.service:TWBiasService",
    options="culturebias.domain.twbias.options:TWBiasOptions",
    dataset_source="culturebias.adapters.twbias.files:TWBiasFiles",
    summary="culturebias.domain.twbias.summary:TWBiasSummary",
    report="culturebias.adapters.twbias.report:TWBiasReport",
    headlines="culturebias.domain.twbias.headlines:HEADLINES",
    compare="culturebias.domain.twbias.comparison:compare_twbias",
    comparison="culturebias.domain.twbias.comparison:TWBiasComparison",
    comparison_sections="culturebias.adapters.twbias.comparison_report:twbias_sections",
    strata="culturebias.domain.twbias.strata:STRATA",
    export_meta="culturebias.domain.twbias.export_columns:TWBIAS_EXPORT_META",
    data_licence="none stated by the authors",
    bundled_data=False,
    data_note="bring your own copy of the authors' files (data.path)",
)
