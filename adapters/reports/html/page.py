"""The self-contained HTML page: inline CSS and JS, figures as data: URIs, a policy that forbids any fetch."""

from __future__ import annotations

import base64
import math
from html import escape
from pathlib import Path

from culturebias.adapters.reports.fonts import embedded_font_css

# Nothing may be fetched: images only as data: URIs, style and script only inline.
CSP = "default-src 'none'; img-src data:; font-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

STYLE = """
body{font-family:"culturebias script",system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:72rem;
  padding:0 1rem;color:#1b1b1b;background:#fff;line-height:1.4}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}h3{font-size:1rem}
.banner{border-left:4px solid #b35900;background:#fff4e5;padding:.5rem 1rem;margin:.5rem 0}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.85rem;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:.2rem .45rem;vertical-align:top;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:#eef1f5}
td{overflow-wrap:break-word;min-width:3rem}td.num{white-space:nowrap}
td.measure{white-space:normal;min-width:9rem}td.measure small{display:block;line-height:1.25;margin-top:.15rem}
table.sortable th{cursor:pointer}table.sortable th:focus{outline:2px solid #1f4e79;outline-offset:-2px}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
tr.drill>td{background:#fafafa}
button.dd{font-size:.75rem;cursor:pointer}
.items td{max-width:36rem;white-space:pre-wrap;word-break:break-word}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #ddd}
.muted{color:#666;font-size:.85rem}
.verdict-pass{color:#176b2c}.verdict-fail{color:#a30000}.verdict-inconclusive{color:#8a5a00}
details.more{margin:.6rem 0;border:1px solid #d5d9de;border-radius:.3rem;padding:.2rem .7rem}
details.more>summary{cursor:pointer;font-weight:600;padding:.3rem 0}
details.more>p.caption{margin:.2rem 0 .5rem}
.empty{border:1px dashed #bbb;padding:.5rem 1rem;color:#444}
@media (max-width:40rem){body{padding:0 .5rem;margin:.75rem auto}h1{font-size:1.2rem}}
@media print{body{max-width:none;margin:0}button.dd,tr.drill{display:none}
  .card,figure,table{break-inside:avoid}details.more{border:0;padding:0}a{color:inherit}}
.card{border:2px solid #1f4e79;border-radius:.5rem;padding:.75rem 1rem;margin:.75rem 0 1.25rem;background:#f6f9fc}
.card h2{margin:.1rem 0 .4rem;border:0;font-size:1.15rem}
.card .who{margin:.1rem 0 .5rem}
.card table.headline{display:table;width:100%;font-size:.9rem;margin:.25rem 0}
.card table.headline td.reading{min-width:14rem}
.card .warnings{margin:.4rem 0 0;padding-left:1.2rem;color:#7a3e00}
.card .value{font-size:1.05rem;font-weight:600;white-space:nowrap}
.card table.headline td.n{white-space:nowrap}
@media (max-width:40rem){.card table.headline thead,.card table.headline td.interval,.card table.headline td.n,
  .card table.headline td.direction{display:none}
  .card table.headline,.card table.headline tbody,.card table.headline tr{display:block}
  .card table.headline th,.card table.headline td{display:inline-block;border:0;padding:.1rem .3rem;background:none}
  .card table.headline tr{border-top:1px solid #ccc;padding:.3rem 0}.card table.headline td.reading{display:block;min-width:0}}
"""

# Sorting moves each row together with the drill-down row that follows it.
SCRIPT = """
(function(){
  window.addEventListener('beforeprint', function(){
    document.querySelectorAll('details').forEach(function(d){ d.open = true; });
  });
  function key(row, i){
    var cell = row.cells[i]; if(!cell) return '';
    var v = cell.getAttribute('data-v'); return v === null ? cell.textContent.trim() : v;
  }
  function sortBy(th){
    var table = th.closest('table'), body = table.tBodies[0], i = th.cellIndex;
    var asc = th.getAttribute('aria-sort') !== 'ascending';
    var groups = [], rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function(r){
      if(r.classList.contains('drill') && groups.length){ groups[groups.length-1].push(r); }
      else { groups.push([r]); }
    });
    var numeric = groups.every(function(g){ var k = key(g[0], i); return k === '' || !isNaN(Number(k)); });
    groups.sort(function(a, b){
      var x = key(a[0], i), y = key(b[0], i);
      if(x === '' && y !== '') return 1; if(y === '' && x !== '') return -1;
      var c = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return asc ? c : -c;
    });
    groups.forEach(function(g){ g.forEach(function(r){ body.appendChild(r); }); });
    Array.prototype.forEach.call(th.parentNode.cells, function(h){ h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
  }
  var data = null;
  function shown(value){
    if(value === null || value === undefined || (typeof value === 'object' && Object.keys(value).length === 0)) return '\\u2013';
    var s = typeof value === 'object' ? JSON.stringify(value) : String(value);
    return s.length > 2000 ? s.slice(0, 2000) + '\\u2026 (' + s.length + ' characters)' : s;
  }
  function fill(slot){
    if(slot.getAttribute('data-done')) return;
    if(data === null) data = JSON.parse(document.getElementById('items-data').textContent);
    var records = JSON.parse(slot.getAttribute('data-items')).map(function(i){ return data[i]; });
    var columns = [];
    records.forEach(function(r){ Object.keys(r).forEach(function(k){
      if(k !== 'benchmark' && k !== 'metadata' && columns.indexOf(k) < 0) columns.push(k); }); });
    var table = document.createElement('table'); table.className = 'sortable items';
    var head = table.createTHead().insertRow();
    columns.concat(['metadata']).forEach(function(c){
      var th = document.createElement('th'); th.textContent = c; head.appendChild(th); });
    var body = table.createTBody();
    records.forEach(function(r){
      var row = body.insertRow();
      columns.forEach(function(c){ row.insertCell().textContent = shown(r[c]); });
      var meta = r.metadata || {};
      row.insertCell().textContent = Object.keys(meta).map(function(k){ return k + ': ' + shown(meta[k]); }).join('\\n') || '\\u2013';
    });
    slot.appendChild(table);
    slot.setAttribute('data-done', '1');
  }
  // Keyboard sorting: every sortable heading takes the focus, Enter or Space sorts by it.
  document.querySelectorAll('table.sortable > thead th').forEach(function(th){
    th.tabIndex = 0;
    th.setAttribute('title', 'sort by this column (click, Enter or Space)');
  });
  document.addEventListener('keydown', function(event){
    var th = event.target.closest && event.target.closest('table.sortable > thead th');
    if(th && (event.key === 'Enter' || event.key === ' ')){ event.preventDefault(); sortBy(th); }
  });
  document.addEventListener('click', function(event){
    var th = event.target.closest('table.sortable > thead th');
    if(th){ sortBy(th); return; }
    var button = event.target.closest('button.dd');
    if(button){
      var drill = document.getElementById(button.getAttribute('aria-controls'));
      var slot = drill.querySelector('.items-slot');
      if(slot) fill(slot);
      var open = drill.hidden;
      drill.hidden = !open;
      button.setAttribute('aria-expanded', open ? 'true' : 'false');
    }
  });
})();
"""


def text(value: object) -> str:
    return escape(str(value), quote=True)


def number_text(value: object, digits: int = 4) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "–"
        if value and (abs(value) >= 1e5 or abs(value) < 1e-3):
            return f"{value:.{digits - 1}e}"  # p-values and counts keep their magnitude
        return f"{value:.{digits}f}"
    return str(value)


def cell(value: object) -> str:
    """A table cell; numbers carry their exact value in data-v for sorting and are right-aligned."""
    if value is None:
        return '<td data-v="">–</td>'
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        exact = repr(value) if isinstance(value, float) and math.isfinite(value) else ("" if isinstance(value, float) else str(value))
        return f'<td class="num" data-v="{text(exact)}" title="{text(exact)}">{text(number_text(value))}</td>'
    if isinstance(value, list):
        return f"<td>{text(', '.join(number_text(v) for v in value))}</td>"
    return f"<td>{text(number_text(value))}</td>"


def figure(path: Path) -> str:
    """A PNG or SVG file embedded in the page (base64 data: URI)."""
    path = Path(path)
    kind = {".png": "image/png", ".svg": "image/svg+xml"}.get(path.suffix.lower())
    if kind is None or not path.is_file():
        return ""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    caption = path.stem.replace("_", " ")
    return f'<figure><img alt="{text(caption)}" src="data:{kind};base64,{data}"><figcaption class="muted">{text(caption)}</figcaption></figure>'


def disclosure(title: str, caption: str, body: str, opened: bool = False) -> str:
    """A collapsible section: its title, a caption saying what it shows and how to read it, then the content."""
    if not body:
        return ""
    return (
        f'<details class="more"{" open" if opened else ""}><summary>{text(title)}</summary>'
        f'<p class="caption muted">{text(caption)}</p>{body}</details>'
    )


def page(title: str, body: str, language: str | None = None) -> str:
    """The whole page; ``language`` (the benchmark's) picks the glyph forms of the embedded CJK subset."""
    fonts = embedded_font_css(title + body, language)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)}</title><style>{fonts}{STYLE}</style></head>\n<body>\n{body}\n"
        f"<script>{SCRIPT}</script>\n</body></html>\n"
    )
