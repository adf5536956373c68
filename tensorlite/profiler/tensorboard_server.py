"""Serving a log directory's profiles in TensorBoard, whose Profile tab (the `xprof` plugin,
when installed) opens the `<host>.xplane.pb` files the profiler writes.

    python -m tensorlite.profiler --tensorboard logs          # a free port on 127.0.0.1
    python -m tensorlite.profiler --tensorboard logs --port 6006

Only the loopback interface is served: a profile names the machine, its threads and the
user's code, and TensorBoard has no authentication.
"""
import importlib.metadata
import sys
import time

from tensorlite.framework import errors

HOST = "127.0.0.1"


def profile_plugin():
    """The installed distribution providing TensorBoard's Profile plugin ("xprof" or
    "tensorboard-plugin-profile"), or None.

    >>> profile_plugin()  # doctest: +SKIP
    'xprof 2.24.2'"""
    for dist in ("xprof", "tensorboard-plugin-profile"):
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def launch(logdir, port=0):
    """Starts TensorBoard on `logdir` in background threads of this process, serving
    127.0.0.1 (`port` 0: a free port the system picks); returns its URL.

    >>> url = launch("logs")  # doctest: +SKIP
    >>> url
    'http://127.0.0.1:38211/'"""
    try:
        from tensorboard import program  # noqa: PLC0415 - optional: the `profile` extra
    except ImportError as e:
        raise errors.UnimplementedError(
            None, None, "TensorBoard is not installed: pip install 'tensorlite[profile]' "
                        "(in a clone of tensorlite: pip install '.[profile]'; tensorboard and "
                        "its Profile plugin, xprof).") from e
    tb = program.TensorBoard()
    tb.configure(argv=[None, "--logdir", str(logdir), "--host", HOST, "--port", str(port)])
    return tb.launch()


def serve(logdir, port=0, print_fn=print):
    """`launch`, prints the URL of the Profile tab and serves until interrupted (Ctrl-C);
    returns the exit status."""
    url = launch(logdir, port)
    print_fn(f"TensorBoard at {url}#profile (Press CTRL+C to quit)")
    plugin = profile_plugin()
    if plugin is None:
        print_fn("TensorBoard's Profile plugin is not installed, so the Profile tab is "
                 "missing: pip install xprof")
    else:
        print_fn(f"Profile plugin: {plugin}")
    sys.stdout.flush()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
