"""`tf.io`: TFRecord files, Example parsing, raw decoding and whole-file reads/writes, plus
`tf.io.gfile` (local file system helpers with TensorFlow's error classes).

    >>> with tf.io.TFRecordWriter("/tmp/data.tfrecord") as writer:
    ...     writer.write(example.SerializeToString())
    >>> tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([], tf.float32)})
"""
import glob as _glob
import os as _os
import shutil as _shutil
import sys as _sys
import types as _types

from tensorlite.data.tfrecord import (TFRecordOptions, TFRecordWriter,  # noqa: F401
                                      tf_record_iterator)
from tensorlite.framework import errors as _errors
from tensorlite.ops.csv_ops import decode_csv  # noqa: F401
from tensorlite.ops.image_codecs import (decode_image, decode_jpeg, decode_png,  # noqa: F401
                                         encode_jpeg, encode_png, is_jpeg)
from tensorlite.ops.parsing_ops import (FixedLenFeature, FixedLenSequenceFeature,  # noqa: F401
                                        RaggedFeature, VarLenFeature, decode_raw,
                                        parse_example,
                                        parse_single_example, parse_tensor, read_file,
                                        serialize_tensor, write_file)

__all__ = ["TFRecordOptions", "TFRecordWriter", "tf_record_iterator", "FixedLenFeature",
           "FixedLenSequenceFeature", "RaggedFeature", "VarLenFeature", "decode_raw", "parse_example",
           "parse_single_example", "parse_tensor", "serialize_tensor", "read_file",
           "write_file", "gfile", "decode_csv", "decode_image", "decode_jpeg", "decode_png",
           "encode_jpeg", "encode_png", "is_jpeg"]


# -- tf.io.gfile ------------------------------------------------------------------------------
def _path(p):
    return _os.fsdecode(p) if isinstance(p, bytes) else _os.fspath(p)


def _fs_error(e, path):
    if isinstance(e, FileNotFoundError):
        return _errors.NotFoundError(None, None, f"{path}; No such file or directory")
    if isinstance(e, FileExistsError):
        return _errors.AlreadyExistsError(None, None, f"{path}; File exists")
    if isinstance(e, PermissionError):
        return _errors.PermissionDeniedError(None, None, f"{path}; Permission denied")
    return _errors.FailedPreconditionError(None, None, f"{path}: {e}")


def _fs(fn):
    """Runs a file-system call, raising TF's error classes instead of OSError."""
    def wrapped(path, *args, **kwargs):
        try:
            return fn(_path(path), *args, **kwargs)
        except OSError as e:
            raise _fs_error(e, _path(path)) from None
    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


class GFile:
    """`tf.io.gfile.GFile(name, mode='r')`: a file object ('r'/'w'/'a' text, '+b' binary)."""

    def __init__(self, name, mode="r"):
        self.name, self.mode = _path(name), mode
        try:
            self._f = open(self.name, mode,  # noqa: SIM115
                           **({} if "b" in mode else {"encoding": "utf-8"}))
        except OSError as e:
            raise _fs_error(e, self.name) from None

    def size(self):
        return _os.fstat(self._f.fileno()).st_size

    def __getattr__(self, attr):  # read, write, readline, seek, tell, flush, close, ...
        return getattr(self.__dict__["_f"], attr)

    def __iter__(self):
        return iter(self._f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def _rename(src, dst, overwrite=False):
    """Renames `src` to `dst`; AlreadyExistsError if `dst` exists and not `overwrite`."""
    if not overwrite and _os.path.exists(_path(dst)):
        raise _errors.AlreadyExistsError(None, None, f"{_path(dst)}; File exists")
    _os.replace(src, _path(dst))


def _copy(src, dst, overwrite=False):
    """Copies file `src` to `dst`; AlreadyExistsError if `dst` exists and not `overwrite`."""
    if not overwrite and _os.path.exists(_path(dst)):
        raise _errors.AlreadyExistsError(None, None, f"{_path(dst)}; File exists")
    _shutil.copyfile(src, _path(dst))


def _listdir(path):
    """Names of the entries of a directory."""
    return sorted(_os.listdir(path))


def _glob_files(pattern):
    """The paths matching a glob pattern (or list of patterns), sorted."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, _os.PathLike)) else pattern
    return sorted({p for pat in patterns for p in _glob.glob(_path(pat))})


def _walk(top, topdown=True, onerror=None):
    """(dirpath, dirnames, filenames) for each directory under `top`."""
    return _os.walk(_path(top), topdown=topdown, onerror=onerror)


gfile = _types.ModuleType(__name__ + ".gfile", "`tf.io.gfile`: the local file system.")
gfile.GFile = GFile
gfile.exists = lambda path: _os.path.exists(_path(path))
gfile.isdir = lambda path: _os.path.isdir(_path(path))
gfile.glob = _glob_files
gfile.walk = _walk
gfile.listdir = _fs(_listdir)
gfile.makedirs = _fs(lambda path: _os.makedirs(path, exist_ok=True))
gfile.mkdir = _fs(_os.mkdir)
gfile.remove = _fs(_os.remove)
gfile.rmtree = _fs(_shutil.rmtree)
gfile.rename = _fs(_rename)
gfile.copy = _fs(_copy)
gfile.stat = _fs(_os.stat)
_sys.modules[gfile.__name__] = gfile
