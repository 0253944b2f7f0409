"""report.html and comparison.html of tiny-model runs, opened in a real headless Chromium.

The page must render (a screenshot that is not blank), show its tables, sort a table when a header
is clicked, open a row's items when its button is clicked, log no console error or exception, and
ask the network for nothing but the file itself. Chromium is Debian's ``chromium`` package
(``.ci/run`` installs it); without it the test skips, except in CI (CI=true), where it fails.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from culturebias.testing.headless_chromium import chromium_binary, open_page

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # two tiny-model runs and two browser sessions: about a minute on 2 cores

from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.bootstrap.api import compare_runs  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402

LIMIT = 8  # two KoBBQ samples of age-001: every context type


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = chromium_binary()
    if binary is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is missing in CI: .ci/run installs Debian's chromium package")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    return binary


def tiny_run(out: Path, seed: int) -> Path:
    model = cached_tiny_causal_lm(seed=seed)
    args = ["run", "kobbq", "--out", str(out), "--set", "model.backend=hf", "--set", f"model.path={model}"]
    args += ["--set", "model.device=cpu", "--set", "run.progress=false", "--set", "protocol.statistics=false"]
    args += ["--set", f"protocol.limit={LIMIT}", "--set", "protocol.prompts=1,2"]
    assert main(args) == 0
    return out


@pytest.fixture(scope="module")
def pages(tmp_path_factory, chromium) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("chromium")
    first, second = tiny_run(root / "tiny3", 3), tiny_run(root / "tiny4", 4)
    compare_runs([first, second], out=root / "cmp")
    return {"run": first / "report.html", "comparison": root / "cmp" / "comparison.html"}


def colours(png: bytes) -> int:
    from PIL import Image

    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(png)).convert("RGB")
    found = image.getcolors(maxcolors=1 << 16)
    return len(found) if found is not None else 1 << 16


SORT_FIRST_NUMERIC_COLUMN = """
(() => {
  const keys = (body, i) => Array.from(body.rows).filter(r => !r.classList.contains('drill'))
    .map(r => r.cells[i] ? r.cells[i].getAttribute('data-v') : null);
  for (const table of document.querySelectorAll('table.sortable')) {
    const body = table.tBodies[0];
    const heads = Array.from(table.tHead.rows[0].cells);
    for (let i = 1; i < heads.length; i++) {
      const before = keys(body, i);
      const numbers = before.filter(k => k !== null && k !== '');
      if (before.some(k => k === null) || new Set(numbers).size < 2) continue;
      heads[i].click();
      const ascending = keys(body, i);
      const order = heads[i].getAttribute('aria-sort');
      heads[i].click();
      const drillsFollow = Array.from(body.rows).every(r => !r.classList.contains('drill') ||
        (r.previousElementSibling && r.previousElementSibling.querySelector('button.dd') &&
         r.previousElementSibling.querySelector('button.dd').getAttribute('aria-controls') === r.id));
      return {ascending: ascending, order: order, descending: keys(body, i), orderAfter: heads[i].getAttribute('aria-sort'),
              drillsFollow: drillsFollow};
    }
  }
  return null;
})()
"""


def in_order(keys: list[str], reverse: bool) -> bool:
    """Numbers sorted, the undefined ("") after them."""
    numbers = [float(k) for k in keys if k != ""]
    blanks = [k for k in keys if k == ""]
    return numbers == sorted(numbers, reverse=reverse) and keys[len(numbers):] == blanks


OPEN_FIRST_DRILL = """
(() => {
  const button = document.querySelector('button.dd');
  if (!button) return null;
  const row = document.getElementById(button.getAttribute('aria-controls'));
  const hiddenBefore = row.hidden;
  button.click();
  const table = row.querySelector('table.items');
  return {
    hiddenBefore: hiddenBefore, hiddenAfter: row.hidden, expanded: button.getAttribute('aria-expanded'),
    count: Number(button.textContent.split(' ')[0]), shown: table ? table.tBodies[0].rows.length : 0,
    height: row.getBoundingClientRect().height, ids: table ? Array.from(table.tBodies[0].rows).map(r => r.cells[0].textContent) : [],
  };
})()
"""


@pytest.mark.parametrize("which", ["run", "comparison"])
def test_the_page_renders_sorts_and_drills_down_without_errors(pages, which, tmp_path):
    path = pages[which]
    with open_page(path) as page:
        png = page.screenshot()
        (tmp_path / f"{which}.png").write_bytes(png)
        assert colours(png) > 1, "the screenshot is blank"
        assert page.evaluate("document.title")
        assert page.evaluate("document.querySelectorAll('table').length") >= 3
        assert page.evaluate("document.querySelectorAll('img[src^=\"data:image/png;base64,\"]').length") >= 1
        assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")

        sorted_ = page.evaluate(SORT_FIRST_NUMERIC_COLUMN)
        assert sorted_ is not None, "a sortable table with a numeric column"
        assert sorted_["order"] == "ascending" and in_order(sorted_["ascending"], reverse=False)
        assert sorted_["orderAfter"] == "descending" and in_order(sorted_["descending"], reverse=True)
        assert sorted_["drillsFollow"], "a row's items stay under it when the table is sorted"

        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # as a reader opens them
        drilled = page.evaluate(OPEN_FIRST_DRILL)
        assert drilled is not None, "a row opens the items behind it"
        assert drilled["hiddenBefore"] and not drilled["hiddenAfter"] and drilled["expanded"] == "true"
        assert drilled["shown"] == min(drilled["count"], 50) and drilled["height"] > 0
        assert all(drilled["ids"])

        assert page.problems() == []
        fetched = [u for u in page.requests() if not u.startswith("data:")]
        assert fetched == [path.resolve().as_uri()], f"the page fetched {json.dumps(fetched)}"
