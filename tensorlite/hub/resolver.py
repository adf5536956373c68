"""Model handles to local directories, as tensorflow_hub resolves them.

A handle is a local directory (used as it is) or an http(s) URL. A URL is downloaded once as
a compressed tarball (`?tf-hub-format=compressed` is added, as tfhub.dev and Kaggle Models
serve it), unpacked into `$TFHUB_CACHE_DIR/<sha1 of the handle>` (default: `tfhub_modules`
under the temp dir, as tensorflow_hub does) and reused offline after that.

Publishing is atomic and validated: the archive is unpacked (archive.py: crafted members,
bombs and truncation refused) into `module/` of a temporary directory that this process
marks as its own (downloads.py), and that `module/` is renamed into place only once the
archive was unpacked completely and holds `saved_model.pb` or `saved_model.pbtxt`. So a
killed, cut-off or wrong download is never cached as resolved: the next resolve tries
again. Cleanup removes only temporary directories whose marker proves they are this
host's and their process is dead; nothing else in the cache is touched.

The download itself is capped at `size_limits.decompression_cap()` bytes, at
`DOWNLOAD_TIMEOUT_S` seconds per network read and `DOWNLOAD_DEADLINE_S` in all
(DeadlineExceededError).

Example:
    >>> resolve("https://example.org/models/embedder/1")
    '/tmp/tfhub_modules/0f1e...'
"""
import hashlib
import http.client
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from tensorlite.framework import errors
from tensorlite.framework import size_limits
from tensorlite.hub import archive
from tensorlite.hub import downloads

DOWNLOAD_TIMEOUT_S = 60  # per network operation
DOWNLOAD_DEADLINE_S = 3600  # for the whole download: a server dripping bytes cannot stall
_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")
_CHUNK = 1 << 20


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
    downloads.remove_dead(root)
    if os.path.isdir(target):
        _check_cached(target, handle)
        return target
    tmp = downloads.make_temp_dir(root, target)
    try:
        module = os.path.join(tmp, "module")
        os.mkdir(module)
        url = compressed_url(handle)
        _download_and_unpack(url, module)
        _check_model(module, url)
        descriptor = os.path.join(tmp, "descriptor.txt")
        with open(descriptor, "w", encoding="utf-8") as f:
            f.write(f"Module: {handle}\nDownloaded by: tensorlite (pid {os.getpid()})\n")
        if _publish(module, target):
            os.replace(descriptor, f"{target}.descriptor.txt")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # made by this call: provably ours
    return target


def _publish(module, target):
    """Renames the validated module into place (the commit point); False when another
    process published it first (its copy is as complete as ours)."""
    try:
        os.rename(module, target)
    except OSError as e:
        if not os.path.isdir(target):
            raise errors.FailedPreconditionError(
                None, None, f"cannot put the downloaded module at {target} ({e}); "
                            f"something else is there: remove it or set TFHUB_CACHE_DIR") \
                from None
        return False
    return True


def _check_model(directory, source):
    if not any(os.path.isfile(os.path.join(directory, n)) for n in _MODEL_FILES):
        raise errors.DataLossError(
            None, None, f"{source}: the archive holds no saved_model.pb or "
                        f"saved_model.pbtxt at its top level, so it is not a SavedModel; "
                        f"check the handle")


def _check_cached(target, handle):
    """A cached module is complete by construction; one lacking its SavedModel (made by
    hand or by an older version) is reported, never deleted (it may not be ours)."""
    if not any(os.path.isfile(os.path.join(target, n)) for n in _MODEL_FILES):
        raise errors.DataLossError(
            None, None, f"the cached module of {handle} at {target} holds no "
                        f"saved_model.pb; remove that directory to download it again")


def _download_and_unpack(url, directory):
    with tempfile.TemporaryFile() as data:
        _download(url, data)
        data.seek(0)
        archive.extract(data, directory, url)


def _download(url, out):
    """Copies the body of `url` into the file `out`, at most decompression_cap() bytes."""
    try:
        response = urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S)  # noqa: S310
    except urllib.error.HTTPError as e:
        cls = errors.NotFoundError if e.code == 404 else errors.UnavailableError
        raise cls(None, None, f"could not download {url}: HTTP {e.code} {e.reason}") \
            from None
    except OSError as e:
        raise errors.UnavailableError(None, None, f"could not download {url}: {e}") from None
    with response:
        claimed = response.headers.get("Content-Length")
        if claimed and claimed.isdigit():
            size_limits.check_inflated(int(claimed), "download", url)
        total, deadline = 0, time.monotonic() + DOWNLOAD_DEADLINE_S
        while True:
            if time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None, None, f"the download of {url} took longer than "
                                f"DOWNLOAD_DEADLINE_S ({DOWNLOAD_DEADLINE_S} s); the server is "
                                f"too slow or stalls")
            try:
                chunk = response.read(_CHUNK)
            except http.client.HTTPException as e:  # the body ended before its length
                raise errors.DataLossError(
                    None, None, f"the download of {url} was cut off ({e!r})") from None
            except OSError as e:
                raise errors.UnavailableError(
                    None, None, f"the download of {url} failed: {e}") from None
            if not chunk:
                return
            total += len(chunk)
            size_limits.check_inflated(total, "download", url)
            out.write(chunk)
