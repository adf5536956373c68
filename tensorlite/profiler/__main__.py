"""Command line: renders the profile of a log directory on the terminal and as HTML.

    python -m tensorlite.profiler LOGDIR          # the newest run under LOGDIR
    python -m tensorlite.profiler LOGDIR --list   # every run, oldest first
    python -m tensorlite.profiler RUN_DIR         # one run directory
    python -m tensorlite.profiler --tensorboard LOGDIR  # TensorBoard's Profile tab, on
                                                        # 127.0.0.1 (a free port; --port N)

(also installed as the `tensorlite-profiler` command).
"""
import argparse
import os
import sys


def build_parser():
    """The argparse parser of `tensorlite-profiler` (every argument described)."""
    parser = argparse.ArgumentParser(
        prog="tensorlite-profiler", description="Render a tensorlite profile: Overview, Input "
        "Pipeline Analyzer, TensorFlow Stats and Trace Viewer, as text and as report.html.",
        epilog="Example: tensorlite-profiler logs/ (the newest run), tensorlite-profiler "
               "--tensorboard logs/ (TensorBoard's Profile tab; needs the profile extra)")
    parser.add_argument("logdir", help="the log directory given to the profiler (or the "
                                       "Keras TensorBoard callback), or one run directory")
    parser.add_argument("--list", action="store_true", help="list the runs and exit")
    parser.add_argument("--tensorboard", action="store_true", help="serve LOGDIR in "
                        "TensorBoard (its Profile plugin, xprof, opens the runs) on "
                        "127.0.0.1 and print the URL")
    parser.add_argument("--port", type=int, default=0, help="TensorBoard's port with "
                        "--tensorboard (default: a free one)")
    return parser


def main(argv=None):
    """Runs the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.port and not args.tensorboard:
        parser.error("--port is TensorBoard's port: give it with --tensorboard")
    if args.list and args.tensorboard:
        parser.error("--list and --tensorboard do different things: give one")
    from tensorlite import profiler  # noqa: PLC0415 - keep --help fast
    from tensorlite.framework import errors  # noqa: PLC0415
    if not os.path.isdir(args.logdir):
        print(f"tensorlite-profiler: {args.logdir!r} is not a directory", file=sys.stderr)
        return 2
    try:
        if args.tensorboard:
            from tensorlite.profiler import tensorboard_server  # noqa: PLC0415
            return tensorboard_server.serve(args.logdir, args.port)
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
