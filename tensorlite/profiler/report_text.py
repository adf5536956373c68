"""The four tools as text for a terminal: Overview, Input Pipeline Analyzer, TensorFlow Stats
and a Trace Viewer summary, rendered from a profile dict (see `analysis.build`)."""

STEP_ROWS = 40  # steps drawn in the terminal step-time graph
OP_ROWS = 25
BAR = 40  # characters of the widest step bar


def _ms(us):
    return f"{us / 1e3:.3f} ms"


def _title(text):
    return [text, "=" * len(text)]


def _table(indent, spec, titles, rows):
    """Lines of a text table: `titles` and then each row (a tuple of cells) formatted by
    the format string `spec`, under a rule, each line after `indent`."""
    head = spec.format(*titles)
    return ([indent + head, indent + "-" * len(head)]
            + [indent + spec.format(*row) for row in rows])


def overview(profile):
    o = profile["overview"]
    lines = _title("Overview")
    lines.append(f"Profiled {_ms(profile['duration_us'])}; {o['num_steps']} steps "
                 f"(breakdown from the {o['source']}).")
    if o["num_steps"]:
        lines.append(f"Average step time {_ms(o['avg_step_us'])} (standard deviation "
                     f"{_ms(o['stddev_step_us'])}, min {_ms(o['min_step_us'])}, "
                     f"max {_ms(o['max_step_us'])}).")
    lines.append(f"  input   {_ms(o['avg_input_us']):>14}  {o['input_percent']:5.1f}%")
    lines.append(f"  compute {_ms(o['avg_compute_us']):>14}  {o['compute_percent']:5.1f}%")
    lines.append(f"  other   {_ms(o['avg_other_us']):>14}  {o['other_percent']:5.1f}%")
    lines.append(f"Verdict: {o['verdict']}.")
    lines.append(f"Recommendation: {o['recommendation']['text']}")
    if o.get("note"):
        lines.append(o["note"])
    steps = o["steps"][:STEP_ROWS]
    if steps:
        lines.append("")
        lines.append("Step-time graph (I input, C compute, . other):")
        widest = max(s["step_us"] for s in steps) or 1.0
        for s in steps:
            scale = BAR / widest
            bar = ("I" * round(s["input_us"] * scale) + "C" * round(s["compute_us"] * scale)
                   + "." * round(s["other_us"] * scale))
            lines.append(f"  step {str(s['step_num']):>6} {_ms(s['step_us']):>13} |{bar}")
        if len(o["steps"]) > STEP_ROWS:
            lines.append(f"  ... {len(o['steps']) - STEP_ROWS} more steps in report.html")
    return lines


def input_pipeline(profile):
    ip = profile["input_pipeline"]
    lines = _title("Input Pipeline Analyzer")
    lines.append(f"Time waiting for input (IteratorGetNext): {_ms(ip['input_us'])}.")
    for p in ip["pipelines"]:
        lines.append(f"Pipeline {p['pipeline']}: {p['structure']}")
        lines += _table(
            "  ", "{:<30}{:>8}{:>10}{:>10}{:>9}  {:<14}{:<14}{}",
            ("Stage", "Calls", "Avg (ms)", "Max (ms)", "% input", "Parallelism", "Buffer",
             "Where"),
            [(s["stage"][:29], s["calls"], f"{s['avg_us'] / 1e3:.3f}",
              f"{s['max_us'] / 1e3:.3f}", f"{s['percent_of_input']:.1f}%",
              s["parallelism"][:13], s["buffer"][:13], s["where"]) for s in p["stages"]])
    if not ip["pipelines"]:
        lines.append("No tf.data pipeline produced elements while profiling.")
    b = ip.get("bottleneck")
    if b:
        lines.append(f"Bottleneck: {b['stage']} (pipeline {b['pipeline']}): {b['why']}")
    for a in ip["advice"]:
        lines.append(f"  * {a['text']}")
    return lines


def op_stats(profile):
    lines = _title("TensorFlow Stats")
    lines.append(f"Host ops by total self time: {sum(r['count'] for r in profile['ops'])} ops "
                 f"executed, op timing {profile['op_timing']}.")
    lines += _table("", "{:<32}{:>8}{:>18}{:>12}{:>12}",
                    ("Op", "Count", "Total self (us)", "Avg (us)", "% of total"),
                    [(r["name"][:31], r["count"], f"{r['total_self_us']:.1f}",
                      f"{r['avg_self_us']:.2f}", f"{r['percent']:.1f}%")
                     for r in profile["ops"][:OP_ROWS]])
    if len(profile["ops"]) > OP_ROWS:
        lines.append(f"... {len(profile['ops']) - OP_ROWS} more op types in report.html")
    return lines


def trace_viewer(profile):
    lines = _title("Trace Viewer")
    lines.append(f"{profile['trace_file']}: Chrome trace event JSON; open it in "
                 f"https://ui.perfetto.dev or chrome://tracing, or see report.html.")
    lines += _table("  ", "{:<48}{:>8}{:>12}", ("Process / thread", "Events", "Busy (ms)"),
                    [((t["process"] + " / " + t["name"])[:47], t["events"],
                      f"{t['busy_us'] / 1e3:.3f}") for t in profile["threads"]])
    return lines


def render(profile):
    sections = [overview(profile), input_pipeline(profile), op_stats(profile),
                trace_viewer(profile)]
    return "\n\n".join("\n".join(s) for s in sections) + "\n"
