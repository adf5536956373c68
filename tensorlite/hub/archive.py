"""Unpacking a downloaded model archive (a tar, usually gzip-compressed) safely.

A model archive comes from the network, so it is treated as hostile:

* every member is checked before anything is written: only regular files and directories
  are unpacked; a member with an absolute name, a `..` component, a symbolic or hard link,
  a device or a FIFO is refused (DataLossError naming the archive and the member);
* what the archive expands to is capped: the decompressed stream (headers and contents,
  counted as the headers are read) and the running count of bytes written are checked
  against `size_limits.decompression_cap()` (ResourceExhaustedError naming the archive and
  `TENSORLITE_MAX_DECOMPRESSED_BYTES`), and so is the number of members (`MAX_MEMBERS`),
  since every member header costs memory even when its file is empty;
* a truncated or corrupt stream (a cut-off gzip, a tar ending inside a member) is
  DataLossError, never a raw EOFError/zlib.error/tarfile.ReadError.

Example:
    >>> with open("model.tar.gz", "rb") as f:      # doctest: +SKIP
    ...     extract(f, "/tmp/module", "model.tar.gz")
"""
import gzip
import lzma
import errno
import os
import tarfile
import zlib

from tensorlite.framework import errors
from tensorlite.framework import size_limits

__all__ = ["extract", "MAX_MEMBERS"]

# A SavedModel has a handful of files (saved_model.pb, two variables files, its assets);
# an archive of a hundred thousand members is a header bomb, not a model.
MAX_MEMBERS = 100_000
_CHUNK = 1 << 20
_BAD_NAME_ERRNOS = (errno.ENAMETOOLONG, errno.EINVAL, errno.EILSEQ)

# What a cut-off or corrupt compressed stream raises from inside tarfile.
_STREAM_ERRORS = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError)


def extract(fileobj, directory, source):
    """Unpacks the tar archive in `fileobj` (any compression tarfile knows) into the
    existing, empty `directory`; `source` names the archive in errors. Nothing is written
    unless every member passed the checks."""
    try:
        with tarfile.open(fileobj=fileobj, mode="r:*") as tar:
            members = _checked_members(tar, source)
            _write_members(tar, members, directory, source)
    except _STREAM_ERRORS as e:
        raise errors.DataLossError(
            None, None, f"{source} is not a valid compressed model archive "
                        f"({type(e).__name__}: {e}); the download was cut off or the "
                        f"server sent something else") from None


def _checked_members(tar, source):
    """All members, each checked (type, name, sizes) as its header is read."""
    members = []
    while True:
        m = tar.next()
        if m is None:
            return members
        members.append(m)
        if len(members) > MAX_MEMBERS:
            raise errors.ResourceExhaustedError(
                None, None, f"{source}: the archive has more than {MAX_MEMBERS} members; "
                            f"refusing to unpack it as a model")
        _check_member(m, source)
        # tar.offset is where the next header starts in the decompressed stream: so this
        # counts every header and every member's claimed contents read so far.
        size_limits.check_inflated(max(tar.offset, m.offset_data + m.size),
                                   "decompressed archive", source)


def _check_member(m, source):
    if not (m.isfile() or m.isdir()):
        kind = "link" if (m.issym() or m.islnk()) else "device or special file"
        raise errors.DataLossError(
            None, None, f"{source}: archive member {m.name!r} is a {kind}; refusing to "
                        f"unpack a crafted model archive")
    name = m.name.replace("\\", "/")
    if name.startswith("/") or ".." in name.split("/") or _has_drive(name):
        raise errors.DataLossError(
            None, None, f"{source}: archive member {m.name!r} is outside the archive; "
                        f"refusing to unpack a crafted model archive")


def _has_drive(name):
    return len(name) > 1 and name[1] == ":"


def _parts(m):
    return [p for p in m.name.replace("\\", "/").split("/") if p not in ("", ".")]


def _write_members(tar, members, directory, source):
    base = os.path.realpath(directory)
    written = [0]
    for m in members:
        try:
            _write_member(tar, m, base, written, source)
        except (FileExistsError, IsADirectoryError, NotADirectoryError):
            raise errors.DataLossError(
                None, None, f"{source}: archive member {m.name!r} conflicts with an "
                            f"earlier member (a file and a directory of one name); "
                            f"refusing to unpack it") from None
        except OSError as e:
            if e.errno not in _BAD_NAME_ERRNOS:
                raise  # the disk (full, read-only): not the archive's fault
            raise errors.DataLossError(
                None, None, f"{source}: archive member {m.name[:200]!r} cannot be a file "
                            f"name here ({e.strerror}); refusing to unpack it") from None


def _write_member(tar, m, base, written, source):
    """Writes one checked member; `written` is the archive's running byte count."""
    parts = _parts(m)
    path = os.path.join(base, *parts) if parts else base
    _check_inside(base, path, m, source)
    if m.isdir():
        os.makedirs(path, exist_ok=True)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tar.extractfile(m) as src, open(path, "wb") as dst:
        got = 0
        while True:
            chunk = src.read(_CHUNK)
            if not chunk:
                break
            written[0] += len(chunk)
            got += len(chunk)
            size_limits.check_inflated(written[0], "decompressed archive", source)
            dst.write(chunk)
    size_limits.check_claimed(m.size, got, f"member {m.name!r}", source)


def _check_inside(base, path, m, source):
    """The real path of a member stays under `base` (a directory created by an earlier
    member cannot be a link, but a name may still be crafted to resolve elsewhere)."""
    real = os.path.realpath(path)
    if os.path.commonpath([base, real]) != base:
        raise errors.DataLossError(
            None, None, f"{source}: archive member {m.name!r} is outside the archive; "
                        f"refusing to unpack a crafted model archive")
