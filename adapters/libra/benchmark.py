"""LIBRA (New Zealand): its descriptor, the whole benchmark as the registry lists it."""

from __future__ import annotations

from culturebias.adapters.plugins.descriptors import BenchmarkDescriptor

LIBRA = BenchmarkDescriptor(
    name="libra",
    title="LIBRA",
    culture="New Zealand",
    language="New Zealand English",
    service="culturebias.application.libra.service:LibraService",
    options="culturebias.domain.libra.options:LibraOptions",
    dataset_source="culturebias.adapters.libra.files:LibraFiles",
    summary="culturebias.domain.libra.summary:LibraSummary",
    report="culturebias.adapters.libra.report:LibraReport",
    headlines="culturebias.domain.libra.headlines:HEADLINES",
    validity="culturebias.domain.libra.validity:VALIDITY",
    compare="culturebias.domain.libra.comparison:compare_libra",
    comparison="culturebias.domain.libra.comparison:LibraComparison",
    comparison_sections="culturebias.adapters.libra.comparison_report:libra_sections",
    builder="culturebias.bootstrap.libra_build_cli:BUILDER",
    unit_values="culturebias.domain.libra.units:libra_unit_values",
    strata="culturebias.domain.libra.strata:STRATA",
    export_meta="culturebias.domain.libra.export_columns:LIBRA_EXPORT_META",
    data_licence="CC BY 4.0 (embedded fixture written for culturebias)",
    bundled_data=True,
    data_note="embedded fixture; point data.path at the full data",
)
