"""The four tools as one self-contained HTML page (`report.html` in the run directory): no
network, no external files; plots are inline SVG, the trace viewer an inline canvas script
over the trace embedded as JSON."""
import html
import json
import time

MAX_TRACE_EVENTS = 30000  # events embedded in the page's trace viewer (trace.json has all)
MAX_DEPTH = 8  # nesting levels drawn per thread row
OP_ROWS = 200
COLORS = {"input": "#f29d38", "compute": "#4a7fd6", "other": "#b8b8b8"}
CAT_COLORS = {"op": "#4a7fd6", "step": "#3aa55d", "input": "#f29d38", "data": "#9b5fc0",
              "trace": "#8a8a8a"}


def _e(text):
    return html.escape(str(text), quote=True)


def _ms(us):
    return f"{us / 1e3:.3f}"


def _bar(percent, color="#4a7fd6"):
    width = max(0.0, min(100.0, percent))
    return (f'<div class="pbar"><div style="width:{width:.1f}%;background:{color}"></div>'
            f'<span>{percent:.1f}%</span></div>')


def _table(head, rows, cls=""):
    out = [f'<table class="{cls}"><thead><tr>']
    out += [f"<th>{_e(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


# -- Overview --------------------------------------------------------------------------------
def step_graph(steps, width=920, height=280):
    """Stacked bars, one per step: input, compute and other time (ms)."""
    if not steps:
        return '<p class="muted">No steps were recorded.</p>'
    left, bottom, top = 56, 34, 12
    plot_w, plot_h = width - left - 12, height - bottom - top
    peak = max(s["step_us"] for s in steps) / 1e3 or 1.0
    slot = plot_w / len(steps)
    bar_w = max(slot * 0.8, 1.0)
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" role="img" aria-label="step-time graph">']
    for i in range(5):  # y grid and labels
        v = peak * i / 4
        y = top + plot_h - plot_h * i / 4
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                     f'stroke="#e3e3e3"/><text x="{left - 6}" y="{y + 4:.1f}" '
                     f'text-anchor="end">{v:.2f}</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.0f}" transform="rotate(-90 12 '
                 f'{top + plot_h / 2:.0f})" text-anchor="middle">step time (ms)</text>')
    label_every = max(1, len(steps) // 12)
    for i, s in enumerate(steps):
        x = left + i * slot + (slot - bar_w) / 2
        y = top + plot_h
        tip = (f"step {s['step_num']}: {_ms(s['step_us'])} ms (input {_ms(s['input_us'])}, "
               f"compute {_ms(s['compute_us'])}, other {_ms(s['other_us'])})")
        parts.append(f"<g><title>{_e(tip)}</title>")
        for key in ("input", "compute", "other"):
            h = plot_h * s[f"{key}_us"] / 1e3 / peak
            y -= h
            parts.append(f'<rect class="{key}" x="{x:.2f}" y="{y:.2f}" width="{bar_w:.2f}" '
                         f'height="{h:.2f}" fill="{COLORS[key]}"/>')
        parts.append("</g>")
        if i % label_every == 0:
            parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{top + plot_h + 16}" '
                         f'text-anchor="middle">{_e(s["step_num"])}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 2}" '
                 f'text-anchor="middle">step</text></svg>')
    return "".join(parts)


def overview(profile):
    o = profile["overview"]
    verdict_cls = "bad" if o["verdict"] == "input-bound" else (
        "warn" if o["verdict"].startswith("moderately") else "good")
    legend = "".join(f'<span class="key"><i style="background:{c}"></i>{k}</span>'
                     for k, c in COLORS.items())
    summary = _table(["", "Average (ms)", "% of step time"], [
        [k, _ms(o[f"avg_{k}_us"]), _bar(o[f"{k}_percent"], COLORS[k])]
        for k in ("input", "compute", "other")], "narrow")
    stats = (f"<p>{o['num_steps']} steps (breakdown from the {_e(o['source'])}); average step "
             f"time <b>{_ms(o['avg_step_us'])} ms</b>, standard deviation "
             f"{_ms(o['stddev_step_us'])} ms, min {_ms(o['min_step_us'])} ms, max "
             f"{_ms(o['max_step_us'])} ms; profiled {_ms(profile['duration_us'])} ms.</p>")
    note = f'<p class="muted">{_e(o["note"])}</p>' if o.get("note") else ""
    return (f'<section id="overview"><h2>Overview</h2>'
            f'<div class="rec {verdict_cls}" id="recommendation"><b>Recommendation for next '
            f'step:</b> {_e(o["recommendation"]["text"])}</div>{stats}{note}'
            f'<h3>Step-time graph</h3><div class="legend">{legend}</div>'
            f'{step_graph(o["steps"])}<h3>Average step-time breakdown</h3>{summary}</section>')


# -- Input pipeline analyzer -----------------------------------------------------------------
def input_pipeline(profile):
    ip = profile["input_pipeline"]
    out = ['<section id="input-pipeline"><h2>Input Pipeline Analyzer</h2>',
           f"<p>Time the training loop waited for input (IteratorGetNext): "
           f"<b>{_ms(ip['input_us'])} ms</b> ({profile['overview']['input_percent']:.1f}% of "
           f"step time).</p>"]
    b = ip.get("bottleneck")
    if b:
        out.append(f'<div class="rec bad" id="bottleneck"><b>Bottleneck:</b> '
                   f'{_e(b["stage"])} (pipeline {_e(b["pipeline"])}): {_e(b["why"])}</div>')
    if ip["advice"]:
        out.append('<h3>What to do</h3><ul id="advice">' + "".join(
            f'<li data-kind="{_e(a["kind"])}">{_e(a["text"])}</li>' for a in ip["advice"])
            + "</ul>")
    for p in ip["pipelines"]:
        out.append(f'<h3>Pipeline {_e(p["pipeline"])}</h3><p class="mono">'
                   f'{_e(p["structure"])}</p>')
        out.append(_table(
            ["Stage", "Calls", "Avg latency (ms)", "Max latency (ms)", "% of input time",
             "Parallelism", "Buffer", "Where"],
            [[_e(s["stage"]), s["calls"], _ms(s["avg_us"]), _ms(s["max_us"]),
              _bar(s["percent_of_input"], "#9b5fc0"), _e(s["parallelism"]), _e(s["buffer"]),
              _e(s["where"])] for s in p["stages"]], "stages"))
    if not ip["pipelines"]:
        out.append('<p class="muted">No tf.data pipeline produced elements while '
                   'profiling.</p>')
    out.append("</section>")
    return "".join(out)


# -- TensorFlow stats ------------------------------------------------------------------------
def op_stats(profile):
    ops = profile["ops"]
    rows = [[_e(r["name"]), r["count"], f"{r['total_self_us']:.1f}", f"{r['avg_self_us']:.2f}",
             f"{r['min_us']:.2f}", f"{r['max_us']:.2f}", _bar(r["percent"])]
            for r in ops[:OP_ROWS]]
    more = (f'<p class="muted">{len(ops) - OP_ROWS} more op types in profile.json.</p>'
            if len(ops) > OP_ROWS else "")
    return (f'<section id="op-stats"><h2>TensorFlow Stats</h2><p>Host ops by total self time: '
            f'{sum(r["count"] for r in ops)} ops executed, '
            f'{profile["total_self_us"] / 1e3:.3f} ms of op self time (op timing '
            f'{_e(profile["op_timing"])}).</p>'
            + _table(["Op", "Count", "Total self (us)", "Avg self (us)", "Min (us)",
                      "Max (us)", "% of total self time"], rows, "ops") + more + "</section>")


# -- Trace viewer ----------------------------------------------------------------------------
def trace_data(trace_events):
    """Compact form of the trace for the page: rows (process/thread), names, and events as
    [row, depth, ts, dur, name index, category index]; the longest-running events first when
    the trace has more than the page embeds."""
    procs, labels = {}, {}
    for e in trace_events:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            labels[(e["pid"], e["tid"])] = e["args"]["name"]
    spans = [e for e in trace_events if e["ph"] == "X"]
    truncated = len(spans) > MAX_TRACE_EVENTS
    if truncated:
        spans = sorted(spans, key=lambda e: -e["dur"])[:MAX_TRACE_EVENTS]
    rows, names, cats, events = {}, {}, {}, []
    stacks = {}
    for e in sorted(spans, key=lambda e: (e["pid"], e["tid"], e["ts"], -e["dur"])):
        key = (e["pid"], e["tid"])
        row = rows.setdefault(key, len(rows))
        stack = stacks.setdefault(key, [])
        while stack and stack[-1] <= e["ts"]:
            stack.pop()
        depth = min(len(stack), MAX_DEPTH - 1)
        stack.append(e["ts"] + e["dur"])
        events.append([row, depth, round(e["ts"], 3), round(e["dur"], 3),
                       names.setdefault(e["name"], len(names)),
                       cats.setdefault(e.get("cat", ""), len(cats))])
    row_labels = [""] * len(rows)
    for (pid, tid), i in rows.items():
        row_labels[i] = f"{procs.get(pid, pid)} / {labels.get((pid, tid), tid)}"
    end = max((e[2] + e[3] for e in events), default=1.0)
    start = min((e[2] for e in events), default=0.0)
    return {"rows": row_labels, "start": start, "names": list(names), "cats": list(cats), "events": events,
            "end": end, "total": len([e for e in trace_events if e["ph"] == "X"]),
            "truncated": truncated, "colors": CAT_COLORS}


_TRACE_SCRIPT = r"""
(function () {
  var data = JSON.parse(document.getElementById('trace-data').textContent);
  var cv = document.getElementById('trace-canvas');
  var tip = document.getElementById('trace-tip');
  var ctx = cv.getContext('2d');
  var LABEL = 260, LEVEL = 12, PAD = 6, AXIS = 22;
  var depth = data.rows.map(function () { return 1; });
  data.events.forEach(function (e) { depth[e[0]] = Math.max(depth[e[0]], e[1] + 1); });
  var top = [], y = AXIS;
  depth.forEach(function (d, i) { top[i] = y; y += d * LEVEL + PAD; });
  var height = y + 4, t0 = data.start, t1 = Math.max(data.end, data.start + 1), width = 0;
  function resize() {
    width = cv.parentNode.clientWidth || 900;
    var r = window.devicePixelRatio || 1;
    cv.width = width * r; cv.height = height * r;
    cv.style.width = width + 'px'; cv.style.height = height + 'px';
    ctx.setTransform(r, 0, 0, r, 0, 0);
    draw();
  }
  function xOf(t) { return LABEL + (t - t0) / (t1 - t0) * (width - LABEL); }
  function tOf(x) { return t0 + (x - LABEL) / (width - LABEL) * (t1 - t0); }
  function draw() {
    ctx.clearRect(0, 0, width, height);
    ctx.font = '11px sans-serif';
    ctx.fillStyle = '#555';
    for (var i = 0; i <= 8; i++) {
      var t = t0 + (t1 - t0) * i / 8, x = xOf(t);
      ctx.fillRect(x, AXIS - 4, 1, height);
      ctx.fillText((t / 1000).toFixed(3) + ' ms', x + 2, 12);
    }
    data.events.forEach(function (e) {
      var a = xOf(e[2]), b = xOf(e[2] + e[3]);
      if (b < LABEL || a > width) return;
      a = Math.max(a, LABEL);
      ctx.fillStyle = data.colors[data.cats[e[5]]] || '#777';
      ctx.fillRect(a, top[e[0]] + e[1] * LEVEL, Math.max(b - a, 0.5), LEVEL - 1);
      if (b - a > 40) {
        ctx.fillStyle = '#fff';
        ctx.fillText(data.names[e[4]].slice(0, Math.floor((b - a) / 6)), a + 2,
                     top[e[0]] + e[1] * LEVEL + LEVEL - 2);
      }
    });
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, AXIS - 4, LABEL - 2, height);
    ctx.fillStyle = '#222';
    data.rows.forEach(function (label, i) {
      ctx.fillText(label.slice(0, 42), 4, top[i] + LEVEL - 2);
    });
  }
  function hit(x, y) {
    var t = tOf(x), best = null;
    data.events.forEach(function (e) {
      var y0 = top[e[0]] + e[1] * LEVEL;
      if (y >= y0 && y < y0 + LEVEL && t >= e[2] && t <= e[2] + e[3]) best = e;
    });
    return best;
  }
  cv.addEventListener('mousemove', function (ev) {
    var r = cv.getBoundingClientRect(), e = hit(ev.clientX - r.left, ev.clientY - r.top);
    if (!e) { tip.style.display = 'none'; return; }
    tip.textContent = data.names[e[4]] + ' [' + data.cats[e[5]] + '] ' +
      (e[3] / 1000).toFixed(3) + ' ms at ' + (e[2] / 1000).toFixed(3) + ' ms';
    tip.style.display = 'block';
    tip.style.left = (ev.clientX - r.left + 12) + 'px';
    tip.style.top = (ev.clientY - r.top + 12) + 'px';
  });
  cv.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var r = cv.getBoundingClientRect(), x = ev.clientX - r.left;
    if (x < LABEL) return;
    var t = tOf(x), f = ev.deltaY > 0 ? 1.25 : 0.8;
    t0 = Math.max(0, t - (t - t0) * f); t1 = t + (t1 - t) * f;
    draw();
  }, {passive: false});
  var drag = null;
  cv.addEventListener('mousedown', function (ev) { drag = [ev.clientX, t0, t1]; });
  window.addEventListener('mouseup', function () { drag = null; });
  window.addEventListener('mousemove', function (ev) {
    if (!drag) return;
    var dt = (ev.clientX - drag[0]) / (width - LABEL) * (drag[2] - drag[1]);
    t0 = drag[1] - dt; t1 = drag[2] - dt; draw();
  });
  cv.addEventListener('dblclick', function () {
    t0 = data.start; t1 = Math.max(data.end, data.start + 1); draw();
  });
  window.addEventListener('resize', resize);
  resize();
  document.getElementById('trace-viewer').setAttribute('data-drawn', String(data.events.length));
})();
"""


def trace_viewer(profile, trace_events):
    data = trace_data(trace_events)
    blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    legend = "".join(f'<span class="key"><i style="background:{c}"></i>{k}</span>'
                     for k, c in CAT_COLORS.items())
    note = (f" The page shows the {len(data['events'])} longest of {data['total']} events."
            if data["truncated"] else "")
    return (f'<section id="trace-viewer"><h2>Trace Viewer</h2><p>One row per thread or worker '
            f'process; scroll to zoom, drag to pan, double-click to reset.{note} The full trace '
            f'is <a href="{_e(profile["trace_file"])}">{_e(profile["trace_file"])}</a> (Chrome '
            f'trace event JSON: open it in Perfetto or chrome://tracing).</p>'
            f'<div class="legend">{legend}</div><div class="trace-box">'
            f'<canvas id="trace-canvas"></canvas><div id="trace-tip"></div></div>'
            f'<script type="application/json" id="trace-data">{blob}</script>'
            f"<script>{_TRACE_SCRIPT}</script></section>")


_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#202124}
header{background:#ff6f00;color:#fff;padding:12px 24px}header h1{margin:0;font-size:20px}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid #ddd;padding:8px 24px;z-index:2}
nav a{margin-right:18px;color:#1a73e8;text-decoration:none;font-weight:600}
main{padding:0 24px 40px}section{border-bottom:1px solid #eee;padding-bottom:16px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f5f5f5}
.pbar{position:relative;width:160px;height:16px;background:#f1f1f1}
.pbar div{height:100%}.pbar span{position:absolute;left:4px;top:0;font-size:11px}
.rec{padding:10px 14px;border-left:5px solid;margin:10px 0;background:#fafafa}
.rec.bad{border-color:#d93025}.rec.warn{border-color:#f29d38}.rec.good{border-color:#3aa55d}
.legend .key{margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.chart text{font-size:11px;fill:#444}.muted{color:#777}.mono{font-family:monospace}
.trace-box{position:relative;border:1px solid #ddd;overflow:hidden}
#trace-tip{position:absolute;display:none;background:#222;color:#fff;padding:3px 6px;
font-size:12px;pointer-events:none;white-space:nowrap}
"""


def render(profile, trace_events):
    """The whole page as a string."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(profile["start_wall"]))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>tensorlite profile: {_e(profile['host'])} {when}</title>"
            f"<style>{_STYLE}</style></head><body>"
            f"<header><h1>tensorlite profile</h1><div>host {_e(profile['host'])}, "
            f"pid {profile['pid']}, started {when}, {_ms(profile['duration_us'])} ms"
            f"</div></header><nav><a href=\"#overview\">Overview</a>"
            f"<a href=\"#input-pipeline\">Input Pipeline Analyzer</a>"
            f"<a href=\"#op-stats\">TensorFlow Stats</a><a href=\"#trace-viewer\">Trace Viewer"
            f"</a></nav><main>{overview(profile)}{input_pipeline(profile)}{op_stats(profile)}"
            f"{trace_viewer(profile, trace_events)}</main></body></html>\n")
