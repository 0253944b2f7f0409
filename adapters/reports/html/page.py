"""The self-contained HTML page: inline CSS and JS, figures as data: URIs, a policy that forbids any fetch."""

from __future__ import annotations

import base64
import math
from html import escape
from pathlib import Path

# Nothing may be fetched: images only as data: URIs, style and script only inline.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:72rem;
  padding:0 1rem;color:#1b1b1b;background:#fff;line-height:1.4}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}h3{font-size:1rem}
.banner{border-left:4px solid #b35900;background:#fff4e5;padding:.5rem 1rem;margin:.5rem 0}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.85rem;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:.2rem .45rem;vertical-align:top;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:#eef1f5;white-space:nowrap}
table.sortable th{cursor:pointer}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
tr.drill>td{background:#fafafa}
button.dd{font-size:.75rem;cursor:pointer}
.items td{max-width:36rem;white-space:pre-wrap;word-break:break-word}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #ddd}
.muted{color:#666;font-size:.85rem}
.verdict-pass{color:#176b2c}.verdict-fail{color:#a30000}.verdict-inconclusive{color:#8a5a00}
"""

# Sorting moves each row together with the drill-down row that follows it.
SCRIPT = """
(function(){
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


def page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n"
        f"<script>{SCRIPT}</script>\n</body></html>\n"
    )
