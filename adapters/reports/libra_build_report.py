"""The LIBRA build's report: report.md (counts per step, group and category; the paper's group
distribution table) and clusters.png (the 2-D cluster projection)."""

from __future__ import annotations

from pathlib import Path

from culturebias.application.out_folder import write_text_atomically
from culturebias.domain.libra_build.topics import TopicClusters


_RULES = {
    "ner_person": "replaced, the model's PERSON",
    "after_role": "replaced, proper noun after a role",
    "leading_subject": "replaced, proper noun opening a sentence before its verb",
    "given_name": "replaced, name list",
    "title": "replaced, after a title",
    "pattern": "replaced, next to a reporting verb",
    "kept_gazetteer": "kept, a place the gazetteer knows",
    "kept_iwi": "kept, an iwi or hapū",
    "kept_marae_kura": "kept, a marae or kura",
    "kept_organisation": "kept, an organisation (organisation word, list or acronym)",
    "kept_ner_place": "kept, the model's place or organisation",
}


def write_build_report(out: Path, report, clusters: TopicClusters | None) -> list[Path]:
    lines = ["# LIBRA build report", "", "## Steps", ""]
    lines += [f"- run: {', '.join(report.steps_run) or '-'}; reused: {', '.join(report.steps_reused) or '-'}"]
    lines += [f"- {key}: {value}" for key, value in report.components.items()]
    lines += ["", "| step | count |", "|---|---|",
              f"| documents read | {report.documents} |",
              *[f"| documents dropped ({reason}) | {n} |" for reason, n in sorted(report.documents_dropped.items())],
              f"| names anonymised | {report.names_replaced} |",
              *[f"| names: {_RULES.get(rule, rule)} | {n} |" for rule, n in sorted(report.names_by_rule.items())],
              f"| sentences | {report.sentences} |",
              *[f"| keywords ({source}) | {n} |" for source, n in sorted(report.keywords.items())],
              f"| clusters | {report.clusters} (noise sentences {report.cluster_noise}) |",
              f"| hits | {report.hits} |",
              f"| not perturbable | {report.not_perturbable} |",
              f"| triplets | {report.candidates} |",
              f"| glossary terms | {report.glossary_terms} |"]
    total = max(report.candidates, 1)
    lines += ["", "## Group distribution", "", "| social group | triplets | share (%) | hits | clusters |",
              "|---|---|---|---|---|"]
    for group in sorted(set(report.triplets_per_group) | set(report.hits_per_group)):
        n = report.triplets_per_group.get(group, 0)
        lines.append(f"| {group} | {n} | {100 * n / total:.1f} | {report.hits_per_group.get(group, 0)} "
                     f"| {report.clusters_per_group.get(group, 0)} |")
    lines += ["", "## Categories", "", "| category | triplets |", "|---|---|"]
    lines += [f"| {c} | {n} |" for c, n in sorted(report.triplets_per_category.items())]
    pairs = getattr(report, "counterparts", ())
    if pairs:
        lines += ["", "## Counterpart groups (S_p terms; review those proposed by similarity)", "",
                  f"Sentences searched: {report.search}.", "",
                  "| social group | counterpart | chosen by | name similarity |", "|---|---|---|---|"]
        lines += [f"| {p.group} | {p.counterpart} | {p.source} | "
                  f"{'-' if p.similarity is None else f'{p.similarity:.2f}'} |" for p in pairs]
    written = [out / "report.md"]
    if clusters is not None and clusters.coordinates:
        written.append(_plot(out / "clusters.png", clusters))
        lines += ["", "![clusters](clusters.png)"]
    write_text_atomically(out / "report.md", "\n".join(lines) + "\n")
    return written


def _plot(path: Path, clusters: TopicClusters) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from culturebias.adapters.reports.fonts import use_script_fonts

    use_script_fonts()

    points = clusters.coordinates or ()
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    figure, axes = plt.subplots(figsize=(6, 5))
    axes.scatter(xs, ys, c=[label if label >= 0 else -1 for label in clusters.labels], cmap="tab20", s=8)
    axes.set_title(f"Topic clusters ({len(clusters.clusters)}; {clusters.noise} noise)")
    tmp = path.with_name(f".{path.name}.partial.png")
    figure.savefig(tmp, dpi=100)
    plt.close(figure)
    tmp.replace(path)
    return path
