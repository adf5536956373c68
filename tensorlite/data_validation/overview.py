"""A self-contained HTML overview of statistics in the style of Facets Overview: one table of
numeric features (count, missing, mean, std dev, zeros, min, median, max, histogram) and one
of categorical features (count, missing, unique, top value and its frequency, average
length, top-values chart), each chart an inline SVG drawn by the page's own script from the
statistics embedded as JSON. No network access; `rhs_statistics` adds a second dataset
(e.g. eval beside train) drawn in a second colour.

Example:
    >>> html = tfdv.get_statistics_html(train_stats, eval_stats)  # doctest: +SKIP
"""
import html as _html
import json

from tensorlite.data_validation.schema_infer import _check_stats, common_stats, feature_name


def _feature_json(stats, dataset_size):
    common = common_stats(stats)
    out = {"name": feature_name(stats), "count": common.num_non_missing,
           "missing": common.num_missing / dataset_size if dataset_size else 0.0}
    if stats.WhichOneof("stats") == "num_stats":
        n = stats.num_stats
        hist = next((h for h in n.histograms if h.type == 0), None)
        out.update(kind="numeric", mean=n.mean, std=n.std_dev, zeros=n.num_zeros, min=n.min,
                   median=n.median, max=n.max,
                   buckets=[[b.low_value, b.high_value, b.sample_count]
                            for b in (hist.buckets if hist else [])])
    else:
        s = stats.string_stats
        top = list(s.top_values)
        out.update(kind="categorical", unique=s.unique, avg_length=s.avg_length,
                   top=top[0].value if top else "", top_freq=top[0].frequency if top else 0,
                   values=[[v.value, v.frequency] for v in top[:10]])
    return out


def _dataset_json(statistics, name):
    _check_stats(statistics)
    dataset = statistics.datasets[0]
    return {"name": name or dataset.name or "dataset", "num_examples": dataset.num_examples,
            "features": [_feature_json(f, dataset.num_examples) for f in dataset.features]}


def get_statistics_html(lhs_statistics, rhs_statistics=None, lhs_name="lhs_statistics",
                        rhs_name="rhs_statistics"):
    """The overview page (a string) of one or two DatasetFeatureStatisticsLists."""
    data = [_dataset_json(lhs_statistics, lhs_name)]
    if rhs_statistics is not None:
        data.append(_dataset_json(rhs_statistics, rhs_name))
    payload = json.dumps(data).replace("</", "<\\/")
    title = _html.escape(" vs ".join(d["name"] for d in data))
    return _PAGE.replace("%TITLE%", title).replace("%DATA%", payload)


def visualize_statistics(lhs_statistics, rhs_statistics=None, lhs_name="lhs_statistics",
                         rhs_name="rhs_statistics"):
    """Shows the overview in a notebook (IPython); elsewhere returns the HTML string."""
    page = get_statistics_html(lhs_statistics, rhs_statistics, lhs_name, rhs_name)
    try:
        from IPython.display import HTML, display  # noqa: PLC0415 - notebooks only
    except ImportError:
        return page
    display(HTML(page))
    return None


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Statistics: %TITLE%</title>
<style>
body{font-family:sans-serif;margin:16px;color:#222}
table{border-collapse:collapse;margin-bottom:24px}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:right;font-size:13px}
th{cursor:pointer;background:#f4f4f4} td.name{text-align:left;font-weight:bold}
.warn{color:#c00} .legend span{display:inline-block;width:12px;height:12px;margin:0 4px}
rect.d0{fill:#4285f4} rect.d1{fill:#f4b400}
</style></head><body>
<h1>Statistics overview</h1>
<div class="legend" id="legend"></div>
<h2>Numeric Features</h2><table id="numeric"></table>
<h2>Categorical Features</h2><table id="categorical"></table>
<script id="stats-data" type="application/json">%DATA%</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("stats-data").textContent);
const SVG = "http://www.w3.org/2000/svg";
const fmt = v => (typeof v === "number") ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : String(v);
function chart(series) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", 220); svg.setAttribute("height", 60); svg.setAttribute("class", "chart");
  const n = Math.max(...series.map(s => s.length), 1);
  let top = 0;
  series.forEach(s => s.forEach(v => { top = Math.max(top, v); }));
  const w = 220 / n / series.length;
  series.forEach((s, d) => s.forEach((v, i) => {
    const r = document.createElementNS(SVG, "rect");
    const h = top ? 56 * v / top : 0;
    r.setAttribute("x", i * w * series.length + d * w); r.setAttribute("width", Math.max(w - 1, 1));
    r.setAttribute("y", 58 - h); r.setAttribute("height", h); r.setAttribute("class", "d" + d);
    svg.appendChild(r);
  }));
  return svg;
}
function fractions(f, total) { return total ? f.map(v => v / total) : f; }
function build(kind, columns) {
  const table = document.getElementById(kind);
  const head = table.insertRow();
  ["feature", "dataset"].concat(columns).concat(["chart"]).forEach((c, i) => {
    const th = document.createElement("th"); th.textContent = c; head.appendChild(th);
    if (i !== 1 && c !== "chart") th.onclick = () => sortBy(table, i);
  });
  const names = [...new Set(DATA.flatMap(d => d.features.filter(f => f.kind === kind).map(f => f.name)))];
  names.forEach(name => {
    const feats = DATA.map(d => d.features.find(f => f.name === name));
    feats.forEach((f, d) => {
      const row = table.insertRow(); row.className = "feature"; row.dataset.name = name;
      const cell = row.insertCell(); cell.className = "name"; cell.textContent = d ? "" : name;
      row.insertCell().textContent = DATA[d].name;
      columns.forEach(c => {
        const td = row.insertCell();
        if (!f) { td.textContent = "-"; return; }
        td.textContent = c === "missing" ? (100 * f.missing).toFixed(1) + "%" : fmt(f[c]);
        if (c === "missing" && f.missing > 0) td.className = "warn";
      });
      if (d === 0) {
        const td = row.insertCell(); td.rowSpan = feats.length;
        const series = kind === "numeric"
          ? feats.map(g => g ? fractions(g.buckets.map(b => b[2]), g.count) : [])
          : feats.map(g => g ? fractions((feats[0] ? feats[0].values : []).map(v => {
              const m = g.values.find(x => x[0] === v[0]); return m ? m[1] : 0; }), g.count) : []);
        td.appendChild(chart(series));
      }
    });
  });
}
function sortBy(table, col) {
  const rows = [...table.querySelectorAll("tr.feature")];
  const groups = {};
  rows.forEach(r => (groups[r.dataset.name] = groups[r.dataset.name] || []).push(r));
  const key = g => { const t = g[0].cells[col].textContent; const v = parseFloat(t); return isNaN(v) ? t : v; };
  const order = Object.values(groups).sort((a, b) => key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  if (table.dataset.sorted === String(col)) { order.reverse(); table.dataset.sorted = ""; }
  else table.dataset.sorted = String(col);
  order.forEach(g => g.forEach(r => table.tBodies[0].appendChild(r)));
}
DATA.forEach((d, i) => {
  const s = document.createElement("span"); s.style.background = i ? "#f4b400" : "#4285f4";
  const label = document.createElement("b"); label.textContent = d.name + " (" + d.num_examples + " examples) ";
  document.getElementById("legend").append(s, label);
});
build("numeric", ["count", "missing", "mean", "std", "zeros", "min", "median", "max"]);
build("categorical", ["count", "missing", "unique", "top", "top_freq", "avg_length"]);
document.body.dataset.drawn = String(document.querySelectorAll("tr.feature").length);
</script></body></html>
"""
