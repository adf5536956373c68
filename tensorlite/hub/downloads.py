"""The resolver's temporary download directories, and removing only the ones it provably
made.

`TFHUB_CACHE_DIR` is often shared: with the user's own files, and with other processes and
other hosts (a network file system) that download into it at the same time. So a name
alone never makes a directory ours. Each download works in a directory

    <sha1 of the handle>.tmp-<pid>-<host tag>-<random token>

that holds, from the moment after it is created, a marker file `tensorlite-download.json`
(written exclusively, in one write) with the tool's name, the host name, the pid, the same
token and the creation time. Cleanup (`remove_dead`) removes such a directory only when

* its name has exactly that form (the host tag being this host's), it is a real directory
  (not a link), and
* its marker is a regular file that parses, names tensorlite's hub, this host, the pid
  and the token of the name, and that pid is not running (and is not this process).

A directory whose marker names another host is never removed, whatever its age: a download
there may be alive, and this host cannot see that host's processes (that host's next
resolve removes it once its process is gone). Anything without a valid marker is left
alone, with one exception: an *empty* directory whose name has the exact form above for
this host and a dead pid (a process killed between creating the directory and writing the
marker) is removed with os.rmdir, which cannot remove anything else.

Example:
    >>> tmp = make_temp_dir("/cache", "/cache/0f1e...")  # doctest: +SKIP
    >>> remove_dead("/cache")                            # doctest: +SKIP
"""
import json
import os
import re
import secrets
import shutil
import socket
import time

from tensorlite.framework import atomic_files as atomic
from tensorlite.framework.atomic_files import host_tag

__all__ = ["make_temp_dir", "remove_dead", "MARKER"]

MARKER = "tensorlite-download.json"
_TOOL = "tensorlite.hub"
_NAME = re.compile(r"^(?P<target>[0-9a-f]{40})\.tmp-(?P<pid>[0-9]{1,10})-"
                   r"(?P<host>[0-9a-f]{12})-(?P<token>[0-9a-f]{32})$")
_MAX_MARKER_BYTES = 4096
_MAX_PID = 2 ** 31 - 1  # pid_t: no process of ours has a larger id (or os.kill overflows)


def make_temp_dir(root, target):
    """Creates this process's temporary directory for `target` (a path in `root`) with its
    marker inside; returns its path."""
    token = secrets.token_hex(16)
    pid = os.getpid()
    path = os.path.join(root, f"{os.path.basename(target)}.tmp-{pid}-{host_tag()}-{token}")
    os.mkdir(path)
    marker = {"tool": _TOOL, "host": socket.gethostname(), "pid": pid, "token": token,
              "created": time.time()}
    fd = os.open(os.path.join(path, MARKER), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(marker))
    return path


def remove_dead(root):
    """Removes the temporary download directories in `root` that this host's dead
    processes left (see the module docstring for the proof each one needs)."""
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        m = _NAME.match(name)
        if m is None or m["host"] != host_tag():
            continue
        pid = int(m["pid"])
        if not 0 < pid <= _MAX_PID or pid == os.getpid() or atomic.pid_alive(pid):
            continue
        path = os.path.join(root, name)
        if os.path.islink(path) or not os.path.isdir(path):
            continue
        if _marker_proves_ours(path, m["token"], pid):
            shutil.rmtree(path, ignore_errors=True)
        else:
            _remove_if_empty(path)


def _marker_proves_ours(path, token, pid):
    marker = os.path.join(path, MARKER)
    try:
        if not os.path.isfile(marker) or os.path.islink(marker):
            return False
        with open(marker, encoding="utf-8") as f:
            data = json.loads(f.read(_MAX_MARKER_BYTES))
    except (OSError, ValueError):
        return False
    return (isinstance(data, dict) and data.get("tool") == _TOOL and
            data.get("host") == socket.gethostname() and data.get("pid") == pid and
            data.get("token") == token)


def _remove_if_empty(path):
    try:
        os.rmdir(path)
    except OSError:
        pass  # not empty (or gone): not provably ours, so it stays
