"""The benchmark's own report.md (the paper's tables, in the paper's layout) as HTML sections.

Each benchmark's Markdown writer lays its numbers out as its paper does (TWBias Table 4 rows,
KoBBQ Table 3, CBBQ per category, McBE task × category, LIBRA Table 1), every number read from
the summary. The page shows those sections after the headline card; what the card or the details
already hold (the title block, the model, the counts) is left out, and "How to read this report"
sits behind a disclosure. Only the Markdown those writers use is read: headings, pipe tables,
lists, quotes, paragraphs, ``code``, **bold** and *italics*.
"""

from __future__ import annotations

import re
from html import escape

from culturebias.adapters.reports.html.page import disclosure
from culturebias.adapters.reports.words import prose

LEFT_OUT = {"Model", "Models", "Counts", "Sampled strata"}  # in the card, the details or their own disclosure already
READING = "How to read this report"
_NUMBER = re.compile(r"^[-−+]?\d[\d,]*(\.\d+)?( ± [\d.]+)?$")


def inline(text: str) -> str:
    """Escaped text with ``code``, **bold** and *italics*; keys outside code read as words."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{escape(part[1:-1])}</code>")
            continue
        shown = escape(prose(part), quote=False)
        shown = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", shown)
        shown = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", shown)
        out.append(shown)
    return "".join(out)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(lines: list[str]) -> str:
    head, rows = _cells(lines[0]), [_cells(l) for l in lines[2:]]
    th = "".join(f"<th>{inline(c)}</th>" for c in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{inline(c)}</td>' if _NUMBER.match(c) else f"<td>{inline(c)}</td>" for c in row) + "</tr>"
        for row in rows
    )
    return f'<table class="sortable"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def blocks(lines: list[str]) -> str:
    """The HTML of one section's lines."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("!["):  # figures are embedded in their own section
            i += 1
        elif line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 1, 6)
            out.append(f"<h{level}>{inline(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.startswith("|"):
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            out.append(_table(lines[i:end]) if end - i >= 2 else f"<p>{inline(line)}</p>")
            i = end
        elif re.match(r"^\s*[-*] ", line):
            items: list[str] = []
            while i < len(lines) and (re.match(r"^\s*[-*] ", lines[i]) or (lines[i].startswith("  ") and items)):
                if re.match(r"^\s*[-*] ", lines[i]):
                    items.append(re.sub(r"^\s*[-*] ", "", lines[i]))
                else:
                    items[-1] += " " + lines[i].strip()
                i += 1
            out.append("<ul>" + "".join(f"<li>{inline(item)}</li>" for item in items) + "</ul>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not re.match(r"^(#|\||!\[|\s*[-*] )", lines[i]):
                para.append(lines[i].lstrip("> ").strip())
                i += 1
            out.append(f"<p>{inline(' '.join(para))}</p>")
    return "".join(out)


def paper_sections(markdown: str) -> tuple[str, str]:
    """(the report's tables and notes as HTML, its reading guide as a disclosure); ('', '') without sections."""
    sections = re.split(r"^## ", markdown, flags=re.M)[1:]
    shown, reading = [], ""
    for section in sections:
        title, _, rest = section.partition("\n")
        title = title.strip()
        if title in LEFT_OUT:
            continue
        html = blocks(rest.splitlines())
        if title == READING:
            reading = disclosure(READING, "What each number means and how it is computed.", html)
        else:
            shown.append(f"<section><h3>{inline(title)}</h3>{html}</section>")
    return "".join(shown), reading
