"""The HTML slice report (TFMA's slicing metrics view): a table of every slice of the
candidate model, sortable by any column (click its heading), and a bar chart of one metric
per slice (choose it in the select; confidence intervals drawn as whiskers). Self-contained:
the results are embedded as JSON and drawn by the page's own script as SVG."""
import json
import math


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def slicing_metrics_html(eval_result, metric_name=None):
    """The report page (a string) of an EvalResult."""
    from tensorlite.model_analysis.result import slice_name  # noqa: PLC0415 - a cycle
    rows = [{"slice": slice_name(key), "metrics": _clean(metrics)}
            for key, metrics in eval_result.slicing_metrics]
    names = list(rows[0]["metrics"]) if rows else []
    chosen = metric_name or next((n for n in names if n != "ExampleCount"), "ExampleCount")
    validation = eval_result.validation
    payload = json.dumps({"rows": rows, "metrics": names, "chosen": chosen,
                          "blessed": bool(validation and validation.validation_ok),
                          "failures": validation.failures if validation else []})
    return _PAGE.replace("%DATA%", payload.replace("</", "<\\/"))


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Model analysis: slices</title>
<style>
body{font-family:sans-serif;margin:16px;color:#222}
table{border-collapse:collapse;margin:12px 0}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:right;font-size:13px}
th{cursor:pointer;background:#f4f4f4} td.slice{text-align:left}
#blessing.ok{color:#080} #blessing.bad{color:#c00}
rect.bar{fill:#4285f4} line.ci{stroke:#222}
</style></head><body>
<h1>Model analysis</h1>
<p id="blessing"></p><ul id="failures"></ul>
<label>Metric <select id="metric"></select></label>
<svg id="chart" width="900" height="260"></svg>
<table id="slices"></table>
<script id="eval-data" type="application/json">%DATA%</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("eval-data").textContent);
const SVG = "http://www.w3.org/2000/svg";
const fmt = v => v === null || v === undefined ? "-" : (Number.isInteger(v) ? String(v) : v.toPrecision(4));
const blessing = document.getElementById("blessing");
blessing.textContent = DATA.blessed ? "BLESSED: every threshold passed" : "NOT BLESSED";
blessing.className = DATA.blessed ? "ok" : "bad";
DATA.failures.forEach(f => { const li = document.createElement("li"); li.textContent = f.reason;
  document.getElementById("failures").appendChild(li); });
const table = document.getElementById("slices");
let sortCol = null, sortDesc = false;
function render() {
  table.innerHTML = "";
  const head = table.insertRow();
  ["slice"].concat(DATA.metrics).forEach((c, i) => {
    const th = document.createElement("th"); th.textContent = c;
    th.onclick = () => { sortDesc = sortCol === i ? !sortDesc : false; sortCol = i; render(); };
    head.appendChild(th);
  });
  const rows = DATA.rows.slice();
  if (sortCol !== null) {
    const key = r => sortCol === 0 ? r.slice : (r.metrics[DATA.metrics[sortCol - 1]] || {}).value;
    rows.sort((a, b) => { const x = key(a), y = key(b);
      const c = x === y ? 0 : (x === null || x === undefined) ? 1 : (y === null || y === undefined) ? -1 : x < y ? -1 : 1;
      return sortDesc ? -c : c; });
  }
  rows.forEach(r => {
    const tr = table.insertRow(); tr.className = "slice-row";
    const td = tr.insertCell(); td.className = "slice"; td.textContent = r.slice;
    DATA.metrics.forEach(m => { const v = r.metrics[m] || {};
      const cell = tr.insertCell();
      cell.textContent = fmt(v.value) + (v.lower_bound !== undefined && v.lower_bound !== null ?
        " [" + fmt(v.lower_bound) + ", " + fmt(v.upper_bound) + "]" : ""); });
  });
}
function chart(metric) {
  const svg = document.getElementById("chart"); svg.innerHTML = "";
  const vals = DATA.rows.map(r => (r.metrics[metric] || {}));
  const top = Math.max(...vals.map(v => Math.max(v.upper_bound || 0, v.value || 0)), 1e-12);
  const w = 900 / Math.max(DATA.rows.length, 1);
  vals.forEach((v, i) => {
    const h = 220 * (v.value || 0) / top;
    const r = document.createElementNS(SVG, "rect");
    r.setAttribute("class", "bar"); r.setAttribute("x", i * w + 2); r.setAttribute("width", Math.max(w - 4, 1));
    r.setAttribute("y", 230 - h); r.setAttribute("height", h);
    const t = document.createElementNS(SVG, "title"); t.textContent = DATA.rows[i].slice + ": " + fmt(v.value);
    r.appendChild(t); svg.appendChild(r);
    if (v.lower_bound !== undefined && v.lower_bound !== null) {
      const l = document.createElementNS(SVG, "line"); l.setAttribute("class", "ci");
      l.setAttribute("x1", i * w + w / 2); l.setAttribute("x2", i * w + w / 2);
      l.setAttribute("y1", 230 - 220 * v.lower_bound / top); l.setAttribute("y2", 230 - 220 * v.upper_bound / top);
      svg.appendChild(l);
    }
  });
  svg.dataset.metric = metric;
}
const select = document.getElementById("metric");
DATA.metrics.forEach(m => { const o = document.createElement("option"); o.value = m; o.textContent = m; select.appendChild(o); });
select.value = DATA.chosen; select.onchange = () => chart(select.value);
render(); chart(DATA.chosen);
document.body.dataset.drawn = String(DATA.rows.length);
</script></body></html>
"""
