"""The four tools as text for a terminal: Overview, Input Pipeline Analyzer, TensorFlow Stats
and a Trace Viewer summary, rendered from a profile dict (see `analysis.build`)."""

STEP_ROWS = 40  # steps drawn in the terminal step-time graph
OP_ROWS = 25
BAR = 40  # characters of the widest step bar


def _ms(us):
    return f"{us / 1e3:.3f} ms"


def _title(text):
    return [text, "=" * len(text)]


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
        head = (f"  {'Stage':<30}{'Calls':>8}{'Avg (ms)':>10}{'Max (ms)':>10}{'% input':>9}"
                f"  {'Parallelism':<14}{'Buffer':<14}Where")
        lines.append(head)
        lines.append("  " + "-" * (len(head) - 2))
        for s in p["stages"]:
            lines.append(f"  {s['stage'][:29]:<30}{s['calls']:>8}{s['avg_us'] / 1e3:>10.3f}"
                         f"{s['max_us'] / 1e3:>10.3f}{s['percent_of_input']:>8.1f}%"
                         f"  {s['parallelism'][:13]:<14}{s['buffer'][:13]:<14}{s['where']}")
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
    head = f"{'Op':<32}{'Count':>8}{'Total self (us)':>18}{'Avg (us)':>12}{'% of total':>12}"
    lines += [head, "-" * len(head)]
    for r in profile["ops"][:OP_ROWS]:
        lines.append(f"{r['name'][:31]:<32}{r['count']:>8}{r['total_self_us']:>18.1f}"
                     f"{r['avg_self_us']:>12.2f}{r['percent']:>11.1f}%")
    if len(profile["ops"]) > OP_ROWS:
        lines.append(f"... {len(profile['ops']) - OP_ROWS} more op types in report.html")
    return lines


def trace_viewer(profile):
    lines = _title("Trace Viewer")
    lines.append(f"{profile['trace_file']}: Chrome trace event JSON; open it in "
                 f"https://ui.perfetto.dev or chrome://tracing, or see report.html.")
    head = f"  {'Process / thread':<48}{'Events':>8}{'Busy (ms)':>12}"
    lines += [head, "  " + "-" * (len(head) - 2)]
    for t in profile["threads"]:
        lines.append(f"  {(t['process'] + ' / ' + t['name'])[:47]:<48}{t['events']:>8}"
                     f"{t['busy_us'] / 1e3:>12.3f}")
    return lines


def render(profile):
    sections = [overview(profile), input_pipeline(profile), op_stats(profile),
                trace_viewer(profile)]
    return "\n\n".join("\n".join(s) for s in sections) + "\n"
