"""MkDocs hooks of the culturebias site: the pages that are generated from the code and the repository.

- every ``<!-- generated:NAME [ARG] -->`` marker becomes a table from the settings models or the registry
  (``culturebias.bootstrap.reference_pages``): the configuration reference, benchmarks, headline metrics,
  backends, stores. Nothing in those tables is written by hand.
- ``changelog.md`` is the repository's ``CHANGELOG.md``;
- ``notes/index.md`` lists the design notes in ``docs/notes/`` (for contributors).

``import culturebias`` resolves to this checkout (the repository root is the package), so the site
documents the code beside it, installed or not.
"""

from __future__ import annotations

import atexit
import re
import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[1]


@event_priority(100)  # before mkdocstrings reads sys.path for its search paths
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    # Always a plain folder holding a ``culturebias`` link to this checkout, first on sys.path: an editable
    # install's import hook is not a folder mkdocstrings can search, and another install is another version.
    link = tempfile.mkdtemp(prefix="culturebias-docs-")
    atexit.register(shutil.rmtree, link, ignore_errors=True)
    (Path(link) / "culturebias").symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, link)
    for name in [m for m in sys.modules if m == "culturebias" or m.startswith("culturebias.")]:
        del sys.modules[name]
    return config


def _notes_index(config: MkDocsConfig) -> str:
    notes = sorted(p for p in (Path(config.docs_dir) / "notes").glob("*.md") if p.name != "index.md")
    lines = [
        "# Design notes",
        "",
        "How a redesign step changed the code's layout, for contributors (users' pages are in the nav).",
        "",
    ]
    for note in notes:
        text = note.read_text(encoding="utf-8")
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), note.stem)
        lines.append(f"- [{title}]({note.name})")
    if not notes:
        lines.append("No notes at present.")
    return "\n".join(lines) + "\n"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    changelog = re.sub(r"\]\(docs/", "](", changelog)
    files.append(File.generated(config, "changelog.md", content=changelog))
    if files.get_file_from_path("notes/index.md") is None:
        files.append(File.generated(config, "notes/index.md", content=_notes_index(config)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    from culturebias.bootstrap.reference_pages import render

    return render(markdown)
