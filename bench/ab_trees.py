"""A/B of two checkouts of tensorlite on one of the benches: "did this change slow anything
down?" measured the way the benches measure speed, interleaved so load hits both alike.

    python bench/ab_trees.py --base /path/to/other/checkout [--rounds 3] -- \
        eager_overhead.py --repeats 3

The bench (a script in bench/, given with its own arguments after `--`) runs in its own
process from each tree in turn (the order alternates each round), with PYTHONPATH set to
that tree, so each process imports its own tensorlite. Every output line that is a table
row is a measure: a label, two or more spaces, then a number, which is the value (a row's
first column, e.g. "tensorlite add     1.890"). For each label met in both trees it prints
the median over the rounds in each tree and the ratio this tree / base (for times above 1
is slower; for rates such as "840/s" below 1 is). A label met again in one run (the same
table for another setting) is numbered: "cnn tensorlite #2".

A checkout to compare against can be made with `git worktree add --detach DIR COMMIT`.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
_MEASURE = re.compile(r"^\s*([A-Za-z].*?)\s{2,}(-?\d+(?:\.\d+)?)(?=\s|x|/|$)")


def measures(text):
    """{label: first number after it} over the lines of a bench's output."""
    out = {}
    for line in text.splitlines():
        m = _MEASURE.match(line)
        if m:
            base = " ".join(m.group(1).split())
            label, k = base, 2
            while label in out:  # a table repeated per setting: "cnn tensorlite #2"
                label, k = f"{base} #{k}", k + 1
            out[label] = float(m.group(2))
    return out


def run_in(tree, bench, args, timeout):
    env = dict(os.environ, PYTHONPATH=tree)
    script = os.path.join(tree, "bench", bench)
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          env=env, cwd=tree, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"{bench} failed in {tree}:\n{proc.stderr[-3000:]}")
    return measures(proc.stdout)


def compare(runs_new, runs_base):
    """[(label, median new, median base, ratio)] for labels measured in every run."""
    labels = [k for k in runs_new[0] if all(k in r for r in runs_new + runs_base)]
    rows = []
    for k in labels:
        new = statistics.median(r[k] for r in runs_new)
        base = statistics.median(r[k] for r in runs_base)
        rows.append((k, new, base, new / base if base else float("nan")))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the other checkout (a directory)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per tree, interleaved")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument("bench", help="a script in bench/, e.g. eager_overhead.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the bench's own arguments")
    opts = parser.parse_args(argv)
    trees = {"new": ROOT, "base": os.path.abspath(opts.base)}
    runs = {"new": [], "base": []}
    for i in range(opts.rounds):
        order = ("new", "base") if i % 2 == 0 else ("base", "new")
        for name in order:
            runs[name].append(run_in(trees[name], opts.bench, opts.args, opts.timeout))
            print(f"round {i + 1}: {name} done", file=sys.stderr)
    print(f"{opts.bench} {' '.join(opts.args)}: medians of {opts.rounds} interleaved runs")
    print(f"{'measure':44s} {'this tree':>12s} {'base':>12s} {'ratio':>7s}")
    for label, new, base, ratio in compare(runs["new"], runs["base"]):
        print(f"{label[:44]:44s} {new:12.3f} {base:12.3f} {ratio:7.2f}")


if __name__ == "__main__":
    main()
