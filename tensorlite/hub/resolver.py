"""Model handles to local directories, as tensorflow_hub resolves them.

A handle is a local directory (used as it is) or an http(s) URL. A URL is downloaded once as
a compressed tarball (`?tf-hub-format=compressed` is added, as tfhub.dev and Kaggle Models
serve it), unpacked into `$TFHUB_CACHE_DIR/<sha1 of the handle>` (default: `tfhub_modules`
under the temp dir, as tensorflow_hub does) and reused offline after that.

The unpacking is atomic: members go into a temporary directory that is renamed into place
when complete, so a killed download leaves no half module behind (and the next resolve
clears the dead process's temporary). Only regular files and directories are unpacked, and
a member with an absolute name, `..`, a link or a device is refused before anything is
written.

Example:
    >>> resolve("https://example.org/models/embedder/1")
    '/tmp/tfhub_modules/0f1e...'
"""
import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request

from tensorlite.framework import atomic_files as atomic
from tensorlite.framework import errors

DOWNLOAD_TIMEOUT_S = 60


def cache_dir():
    """$TFHUB_CACHE_DIR, or tfhub_modules under the system's temp dir."""
    return os.environ.get("TFHUB_CACHE_DIR") or os.path.join(tempfile.gettempdir(),
                                                             "tfhub_modules")


def _is_url(handle):
    return urllib.parse.urlparse(handle).scheme in ("http", "https")


def compressed_url(handle):
    parts = urllib.parse.urlparse(handle)
    query = urllib.parse.parse_qsl(parts.query)
    if not any(k == "tf-hub-format" for k, _ in query):
        query.append(("tf-hub-format", "compressed"))
    return urllib.parse.urlunparse(parts._replace(query=urllib.parse.urlencode(query)))


def resolve(handle):
    """`hub.resolve`: the local directory of a handle (downloading a URL once)."""
    handle = os.fspath(handle)
    if not _is_url(handle):
        if not os.path.isdir(handle):
            raise errors.NotFoundError(None, None, f"{handle} is neither a directory nor an "
                                       f"http(s) URL of a model")
        return handle
    root = cache_dir()
    os.makedirs(root, exist_ok=True)
    target = os.path.join(root, hashlib.sha1(handle.encode("utf-8")).hexdigest())
    _clear_dead(root)
    if os.path.isdir(target):
        return target
    tmp = atomic.temp_name(target)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        _download_and_unpack(compressed_url(handle), tmp)
        with open(f"{tmp}.descriptor.txt", "w", encoding="utf-8") as f:
            f.write(f"Module: {handle}\nDownloaded by: tensorlite (pid {os.getpid()})\n")
        try:
            os.rename(tmp, target)  # the commit point: the module appears complete
        except OSError:
            if not os.path.isdir(target):
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another process finished first
        os.replace(f"{tmp}.descriptor.txt", f"{target}.descriptor.txt")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.exists(f"{tmp}.descriptor.txt"):
            os.remove(f"{tmp}.descriptor.txt")
    return target


def _clear_dead(root):
    for name in os.listdir(root):
        head, sep, pid = name.partition(".tmp-")
        pid = pid.split(".")[0]
        if sep and pid.isdigit() and not atomic.pid_alive(int(pid)):
            path = os.path.join(root, name)
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.exists(path):
                os.remove(path)


def _download_and_unpack(url, directory):
    try:
        response = urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S)  # noqa: S310
    except OSError as e:
        raise errors.UnavailableError(None, None, f"could not download {url}: {e}") from None
    with response, tempfile.TemporaryFile() as archive:
        shutil.copyfileobj(response, archive)
        archive.seek(0)
        try:
            with tarfile.open(fileobj=archive, mode="r:*") as tar:
                unpack(tar, directory, url)
        except tarfile.TarError as e:
            raise errors.DataLossError(None, None, f"{url} did not send a valid compressed "
                                       f"model archive ({e})") from None


def unpack(tar, directory, where):
    """Unpacks regular files and directories of `tar` into `directory`, refusing (before
    writing anything) members that would land outside it or that are links or devices."""
    members = tar.getmembers()
    base = os.path.realpath(directory)
    for m in members:
        name = m.name.replace("\\", "/")
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if not (m.isfile() or m.isdir()):
            raise ValueError(f"{where}: archive member {m.name!r} is a link or device; "
                             f"refusing to unpack a crafted model archive")
        if name.startswith("/") or ".." in parts:
            raise ValueError(f"{where}: archive member {m.name!r} is outside the archive; "
                             f"refusing to unpack a crafted model archive")
        target = os.path.realpath(os.path.join(base, *parts)) if parts else base
        if os.path.commonpath([base, target]) != base:
            raise ValueError(f"{where}: archive member {m.name!r} is outside the archive")
    for m in members:
        parts = [p for p in m.name.replace("\\", "/").split("/") if p not in ("", ".")]
        path = os.path.join(base, *parts) if parts else base
        if m.isdir():
            os.makedirs(path, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tar.extractfile(m) as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
