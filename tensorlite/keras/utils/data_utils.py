"""`tf.keras.utils.get_file`: a file from a URL (http, https, file://) or a local path,
cached under cache_dir/cache_subdir (default ~/.keras/datasets), checked against a
SHA-256 or MD5 hash, written atomically (a temp name then os.replace: an interrupted
download leaves no partial file), optionally extracted (tar/zip; members that would land
outside the target directory are refused).

Example:
    >>> path = tf.keras.utils.get_file("data.csv", "https://example.com/data.csv",
    ...                                file_hash="9f86d0...")  # doctest: +SKIP
"""
import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile

from tensorlite.framework import atomic_files, errors
from tensorlite.framework.size_limits import check_inflated

__all__ = ["get_file"]


def _hash(path, algorithm):
    h = hashlib.md5() if algorithm == "md5" else hashlib.sha256()  # noqa: S324 - Keras's
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _algorithm(file_hash, hash_algorithm):
    if hash_algorithm in ("sha256", "md5"):
        return hash_algorithm
    return "sha256" if file_hash is not None and len(file_hash) == 64 else "md5"


def validate_file(fpath, file_hash, algorithm="auto"):
    """Whether the file's hash equals `file_hash` (SHA-256, or MD5 for 32 hex digits)."""
    return _hash(fpath, _algorithm(file_hash, algorithm)) == file_hash


def _fetch(origin, dest, file_hash=None, algorithm="auto"):
    """Copies `origin` to `dest` through a temp file in dest's directory, which takes
    dest's name only once complete and, with a hash, verified: a killed or corrupt download
    never leaves a file a later load would take for data."""
    parsed = urllib.parse.urlparse(origin)

    def download(tmp):
        with open(tmp, "wb") as out:
            if parsed.scheme in ("", "file"):
                src = urllib.request.url2pathname(parsed.path) if parsed.scheme else origin
                if not os.path.exists(src):
                    raise errors.NotFoundError(None, None, f"get_file: {origin} does not exist")
                with open(src, "rb") as f:
                    shutil.copyfileobj(f, out)
            elif parsed.scheme in ("http", "https"):
                try:
                    with urllib.request.urlopen(origin, timeout=60) as r:  # noqa: S310
                        shutil.copyfileobj(r, out)
                except OSError as e:
                    raise Exception(f"URL fetch failure on {origin}: {e}") from None  # noqa: TRY002 - Keras's
            else:
                raise ValueError(f"get_file: unsupported origin {origin!r} (http, https, "
                                 f"file:// or a local path)")
        if file_hash is not None and not validate_file(tmp, file_hash, algorithm):
            raise ValueError(f"Incomplete or corrupted file detected. The "
                             f"{_algorithm(file_hash, algorithm)} file hash does not match "
                             f"the provided value of {file_hash} (downloaded from {origin}; "
                             f"nothing was cached)")
    atomic_files.write_with(dest, download)


def _safe_members(names, target):
    root = os.path.realpath(target)
    for name in names:
        path = os.path.realpath(os.path.join(root, name))
        if path != root and not path.startswith(root + os.sep):
            raise errors.InvalidArgumentError(
                None, None, f"get_file: the archive member {name!r} would be written outside "
                f"{target}; refusing to extract it")


def _extract(path, target, archive_format):
    """Unpacks the archive at `path` into `target`: into a temporary directory first, whose
    top-level entries are then renamed into place, so a killed extraction leaves no partial
    directory that a later load would read."""
    formats = ["tar", "zip"] if archive_format in ("auto", None) else (
        [archive_format] if isinstance(archive_format, str) else list(archive_format))
    staging = tempfile.mkdtemp(dir=target, prefix=".extract-")
    try:
        if "tar" in formats and tarfile.is_tarfile(path):
            with tarfile.open(path) as tar:
                members = tar.getmembers()
                _safe_members([m.name for m in members], target)
                bad = [m.name for m in members if not (m.isfile() or m.isdir())]
                if bad:
                    raise errors.InvalidArgumentError(None, None, f"get_file: the archive holds "
                                                      f"links or devices {bad[:3]}; refusing")
                check_inflated(sum(m.size for m in members), "archive", path)
                tar.extractall(staging)  # noqa: S202 - members checked above
        elif "zip" in formats and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                _safe_members(z.namelist(), target)
                check_inflated(sum(i.file_size for i in z.infolist()), "archive", path)
                z.extractall(staging)  # noqa: S202 - members checked above
        else:
            return False
        for name in os.listdir(staging):
            final = os.path.join(target, name)
            if os.path.isdir(final) and not os.path.islink(final):
                shutil.rmtree(final)  # an older extraction of the same archive
            os.replace(os.path.join(staging, name), final)
        return True
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as e:
        raise errors.DataLossError(None, None, f"get_file: {path} is not a valid archive: "
                                               f"{e}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None, force_download=False):
    """The local path of `fname`, fetched from `origin` unless cached (and, with a hash,
    valid); with extract/untar the archive is unpacked beside it."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if fname is None:
        fname = os.path.basename(urllib.parse.urlparse(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: "
                             f"'{origin}'. Please specify the `fname` as the input param.")
    base = cache_dir or os.environ.get("KERAS_HOME") or os.path.join(
        os.path.expanduser("~"), ".keras")
    directory = os.path.join(base, cache_subdir)
    os.makedirs(directory, exist_ok=True)
    file_hash = file_hash or md5_hash
    algorithm = "md5" if md5_hash and not file_hash else hash_algorithm
    fpath = os.path.join(directory, fname + (".tar.gz" if untar else ""))
    fresh = force_download or not os.path.exists(fpath) or (
        file_hash is not None and not validate_file(fpath, file_hash, algorithm))
    if fresh:
        _fetch(origin, fpath, file_hash, algorithm)
    if untar:
        target = os.path.join(directory, fname)
        if fresh or not os.path.exists(target):
            _extract(fpath, directory, "tar")
        return target
    if extract:
        _extract(fpath, directory, archive_format)
    return fpath
