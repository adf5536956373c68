"""Command line: renders the profile of a log directory on the terminal and as HTML.

    python -m tensorlite.profiler LOGDIR          # the newest run under LOGDIR
    python -m tensorlite.profiler LOGDIR --list   # every run, oldest first
    python -m tensorlite.profiler RUN_DIR         # one run directory

(also installed as the `tensorlite-profiler` command).
"""
import argparse
import os
import sys


def main(argv=None):
    from tensorlite import profiler  # noqa: PLC0415
    from tensorlite.framework import errors  # noqa: PLC0415
    parser = argparse.ArgumentParser(
        prog="tensorlite-profiler", description="Render a tensorlite profile: Overview, Input "
        "Pipeline Analyzer, TensorFlow Stats and Trace Viewer, as text and as report.html.")
    parser.add_argument("logdir", help="the log directory given to the profiler (or the "
                                       "Keras TensorBoard callback), or one run directory")
    parser.add_argument("--list", action="store_true", help="list the runs and exit")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.logdir):
        print(f"tensorlite-profiler: {args.logdir!r} is not a directory", file=sys.stderr)
        return 2
    try:
        if args.list:
            for run in profiler.runs(args.logdir):
                print(run)
            return 0
        run = profiler.report(args.logdir)
    except errors.OpError as e:
        print(f"tensorlite-profiler: {e.message}", file=sys.stderr)
        return 1
    print(f"\nHTML report: {os.path.join(run, profiler.REPORT_FILE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
