"""Every benchmark's report.html and a comparison.html as a reader sees them, in one headless Chromium.

The pages are written from the stored reference summaries (no model runs), then checked in the
browser: the headline card is on the first 1366×768 screen, the page's Chinese, Korean and Māori
text is drawn with real glyphs (not the empty boxes of a missing font), and no internal key name
of the summary is visible, even with every disclosure open. Chromium is Debian's ``chromium``;
without it the module skips, except in CI (CI=true), where it fails.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from culturebias.testing.headless_chromium import chromium_binary, open_browser
from culturebias.testing.kobbq_runs import kobbq_run
from culturebias.testing.report_pages import PER_BENCHMARK, reference_summary, write_comparison, write_run_report

FIRST_SCREEN = (1366, 768)
SCRIPT_CHARACTERS = re.compile(r"[\u3400-\u9fff\uac00-\ud7af\u0100-\u017f]")
INTERNAL_KEY = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
# What a flattened JSON block shows: dotted keys (details.template_scores), "a|b|c", the sample block's raw fields.
RAW_KEY = re.compile(r"\b[A-Za-z]\w*\.[A-Za-z]\w*_\w+|\w\|\w|low\|high|units_in_population|items_in_population|stratum=")


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    if chromium_binary() is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is missing in CI: .ci/run installs Debian's chromium package")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    root = tmp_path_factory.mktemp("pages")
    found = {b: write_run_report(reference_summary(name), root / b) for b, name in PER_BENCHMARK.items()}
    runs = [reference_summary("kobbq_replay", "run-a", "org/alpha-7b"), reference_summary("kobbq_tiny", "run-b", "org/beta-7b")]
    found["comparison"] = write_comparison(runs, root / "comparison")
    for benchmark, name in PER_BENCHMARK.items():
        pair = [reference_summary(name, "run-a", "org/alpha-7b"), reference_summary(name, "run-b", "org/beta-7b")]
        found[f"comparison_{benchmark}"] = write_comparison(pair, root / f"comparison_{benchmark}")
    sampled = kobbq_run("biased", name="stereotyper", options={"sample": 168}, out_dir=root / "sampled").summary
    found["kobbq_sampled"] = write_run_report(sampled, root / "sampled")
    return found


@pytest.fixture(scope="module")
def browser(pages):
    with open_browser(*FIRST_SCREEN) as page:
        yield page


CARD_PLACE = """
(() => {
  const card = document.getElementById('headline');
  if (!card) return null;
  const first = card.querySelector('tbody tr');
  const box = card.getBoundingClientRect();
  return {top: box.top, heading: card.querySelector('h2').getBoundingClientRect().bottom,
          firstRow: first ? first.getBoundingClientRect().bottom : null, text: card.innerText};
})()
"""

# Each distinct character drawn alone with the page's own font: a missing glyph draws the same
# .notdef box for every character (and the same as an unassigned code point), a real glyph does not.
GLYPHS = """
(async (chars) => {
  await document.fonts.load('32px "culturebias script"', chars.join(''));
  await document.fonts.ready;
  const font = '32px ' + getComputedStyle(document.body).fontFamily;
  const canvas = document.createElement('canvas'); canvas.width = 48; canvas.height = 48;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (c) => { ctx.clearRect(0, 0, 48, 48); ctx.font = font; ctx.fillText(c, 4, 38);
    return Array.from(ctx.getImageData(0, 0, 48, 48).data).join(','); };
  const notdef = draw('\\u0378');
  const drawn = chars.map(draw);
  return {distinct: new Set(drawn).size, asNotdef: drawn.filter(d => d === notdef).length,
          blank: drawn.filter(d => !/[1-9]/.test(d)).length,
          check: document.fonts.check('16px "culturebias script"', chars.join('')),
          loaded: Array.from(document.fonts).filter(f => f.family.replace(/"/g, '') === 'culturebias script'
                                                      && f.status === 'loaded').length,
          widths: [ctx.measureText(chars.join('')).width, ctx.measureText('\\u0378'.repeat(chars.length)).width]};
})
"""


@pytest.mark.parametrize("which", [*PER_BENCHMARK, "comparison"])
def test_the_headline_card_is_on_the_first_screen(pages, browser, which):
    browser.viewport(*FIRST_SCREEN)
    browser.load(pages[which])
    place = browser.evaluate(CARD_PLACE)
    assert place is not None, "the page opens with a headline card"
    assert place["top"] < 200 and place["heading"] < FIRST_SCREEN[1]
    assert place["firstRow"] is not None and place["firstRow"] < FIRST_SCREEN[1], "its first metric is on the first screen"
    assert "95%" in place["text"] or "interval" in place["text"]
    assert browser.problems() == []


@pytest.mark.parametrize("which", ["twbias", "kobbq", "cbbq", "libra"])
def test_the_cultures_script_is_drawn_with_real_glyphs(pages, browser, which):
    browser.load(pages[which])
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    shown = browser.evaluate("document.body.innerText")
    chars = sorted(set(SCRIPT_CHARACTERS.findall(shown)))[:40]
    assert chars, f"the {which} page shows text in its culture's script"
    drawn = browser.evaluate(f"({GLYPHS})({chars!r})")
    assert drawn["loaded"] == 1 and drawn["check"], "the embedded subset of the script font is loaded"
    assert drawn["blank"] == 0 and drawn["asNotdef"] == 0, f"characters drawn as empty boxes: {drawn}"
    assert drawn["distinct"] == len(chars), f"characters that share one box: {drawn}"
    assert drawn["widths"][0] != drawn["widths"][1]


MARK_SCRIPT_NODES = r"""
(() => {
  const script = /[\u3400-\u9fff\uac00-\ud7af\u0100-\u017f]/g;
  let marked = 0;
  for (const el of document.body.querySelectorAll('*')) {
    if (marked >= 150 || el.children.length || !el.getClientRects().length) continue;
    const found = (el.textContent.match(script) || []).length;
    if (found) { el.setAttribute('data-script', found); marked++; }
  }
  return marked;
})()
"""


@pytest.mark.parametrize("which", ["twbias", "kobbq", "cbbq", "libra"])
def test_every_element_draws_its_script_with_the_embedded_font(pages, browser, which):
    """The font the browser really used, element by element (a cell shaped before the font loaded shows boxes)."""
    browser.load(pages[which])
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    browser.evaluate("document.fonts.ready.then(() => 1)")
    assert browser.evaluate(MARK_SCRIPT_NODES) > 0
    browser.send("DOM.enable")
    browser.send("CSS.enable")
    root = browser.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    wrong = []
    for node in browser.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-script]"})["nodeIds"]:
        pairs = browser.send("DOM.getAttributes", {"nodeId": node})["attributes"]
        wanted = int(dict(zip(pairs[::2], pairs[1::2]))["data-script"])
        fonts = browser.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        drawn = sum(f["glyphCount"] for f in fonts if f["isCustomFont"])
        if drawn < wanted:
            wrong.append((browser.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"][:120], fonts))
    assert wrong == []


@pytest.mark.parametrize("which", [*PER_BENCHMARK, "comparison"])
def test_no_internal_key_name_is_visible(pages, browser, which):
    browser.load(pages[which])
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    browser.evaluate("document.querySelectorAll('code').forEach(c => c.remove())")  # a setting name is shown as code
    visible = browser.evaluate("document.body.innerText")
    assert INTERNAL_KEY.findall(visible) == []


def test_the_page_embeds_only_the_glyphs_it_uses(pages):
    for path in pages.values():
        size = path.stat().st_size
        html = path.read_text(encoding="utf-8")
        font = re.search(r"url\(data:font/woff;base64,([A-Za-z0-9+/=]+)\)", html)
        assert font is not None
        assert len(font.group(1)) * 3 / 4 < 400_000, f"{path.parent.name}: the font subset is {len(font.group(1))} base64 bytes"
        assert size < 2_000_000


HEADINGS = """
Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6, th, summary'))
  .filter(e => e.getClientRects().length).map(e => e.innerText.trim())
"""
MEASURES = "Array.from(document.querySelectorAll('td.measure')).map(c => c.innerText.split('\\n')[0].trim())"
CELL = re.compile(r"^[−-]?\d[\d,]*(\.\d+)?( \[[−-]?\d[\d,]*\.\d+, [−-]?\d[\d,]*\.\d+\])?$")  # a value [its interval]


@pytest.mark.parametrize("which", [f"comparison_{b}" for b in PER_BENCHMARK])
def test_a_comparisons_details_are_tables_of_words(pages, browser, which):
    """Every disclosure open: no raw key, no heading that starts with ":" or names a part of an interval."""
    browser.viewport(*FIRST_SCREEN)
    browser.load(pages[which])
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    browser.evaluate("document.querySelectorAll('code').forEach(c => c.remove())")
    visible = browser.evaluate("document.body.innerText")
    assert RAW_KEY.findall(visible) == [] and INTERNAL_KEY.findall(visible) == []
    headings = browser.evaluate(HEADINGS)
    assert [h for h in headings if h.startswith(":") or re.search(r": (low|high|level|unit|method|seed|note)$", h)] == []
    assert [h for h in headings if h.endswith("/ intervals")] == []
    cells = [c for c in browser.evaluate(MEASURES) if not c.startswith(("[", "–"))]  # an interval alone; nothing measured
    assert all(CELL.match(c) for c in cells), [c for c in cells if not CELL.match(c)][:5]
    if which != "comparison_mcbe":  # McBE keeps its intervals apart from its values
        assert any("[" in c for c in cells), "a value and its interval share one cell"
    assert browser.problems() == []


STRATA = """
(() => {
  const details = Array.from(document.querySelectorAll('details')).find(d => d.querySelector('summary').innerText.trim() === 'Sampled strata');
  if (!details) return null;
  const closed = !details.open;
  details.open = true;
  const table = details.querySelector('table');
  return {closed: closed, caption: details.querySelector('p.caption').innerText,
          heads: Array.from(table.tHead.rows[0].cells).map(c => c.innerText.trim()), rows: table.tBodies[0].rows.length,
          height: table.getBoundingClientRect().height};
})()
"""


def test_a_sampled_run_opens_with_one_sentence_and_keeps_its_strata_in_a_table(pages, browser):
    browser.viewport(*FIRST_SCREEN)
    browser.load(pages["kobbq_sampled"])
    card = browser.evaluate("document.getElementById('headline').innerText")
    sentence = [line for line in card.splitlines() if line.startswith("A sampled run")]
    assert len(sentence) == 1 and "stratified by category × label type × context condition" in sentence[0]
    assert "the strata are listed below" in sentence[0] and "stratum" not in card
    bottom = browser.evaluate("document.getElementById('headline').getBoundingClientRect().bottom")
    assert bottom < FIRST_SCREEN[1], "the card, its sentence included, fits on the first screen"
    strata = browser.evaluate(STRATA)
    assert strata is not None and strata["closed"] and "in proportion to its share" in strata["caption"]
    assert strata["heads"][:3] == ["category", "label type", "templates drawn"] and strata["rows"] > 10 and strata["height"] > 0
    assert "Every stratum has context condition ambiguous + disambiguated." in strata["caption"]
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert re.findall(r"units_in_population|items_in_population|stratum=", browser.evaluate("document.body.innerText")) == []
    assert browser.problems() == []


@pytest.mark.parametrize("which", [*PER_BENCHMARK, "kobbq_sampled"])
def test_a_run_pages_numbers_join_each_value_to_its_interval(pages, browser, which):
    """The run page's detail blocks: no row named "intervals", no column named for a part of an interval."""
    browser.load(pages[which])
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    headings = browser.evaluate(HEADINGS)
    assert [h for h in headings if h.startswith(":") or re.search(r": (low|high|level|unit|method|seed|note)$", h)] == []
    assert [h for h in headings if h == "intervals" or h.endswith("/ intervals")] == []
    cells = [c for c in browser.evaluate(MEASURES) if not c.startswith(("[", "–"))]
    assert all(CELL.match(c) for c in cells), [c for c in cells if not CELL.match(c)][:5]
    assert browser.problems() == []
