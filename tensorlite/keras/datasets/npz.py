"""The datasets' `.npz` files, read without running code: numeric arrays load with
pickling off; the object arrays of IMDB and Reuters (lists of word ids, which NumPy can
only store as a pickle) load through an unpickler that admits NumPy's array
reconstruction and nothing else. Each member's declared size is checked against the
decompression cap before it is read."""
import io
import pickle
import zipfile

import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.size_limits import check_inflated

# NumPy's array reconstruction (both spellings of its multiarray module), its scalars, and
# the byte-string decoding of pickles written by Python 2 (the CIFAR batches)
_ALLOWED = frozenset({("numpy", "ndarray"), ("numpy", "dtype"),
                      ("numpy.core.multiarray", "_reconstruct"),
                      ("numpy._core.multiarray", "_reconstruct"),
                      ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
                      ("_codecs", "encode")})


class ArraysOnlyUnpickler(pickle.Unpickler):
    """Unpickles arrays, dicts, lists and bytes; any other callable a pickle names is an
    UnpicklingError before it runs."""

    def find_class(self, module, name):
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}: a dataset file "
                                         f"holds only arrays, lists and bytes")
        return super().find_class(module, name)


def _read_member(data):
    f = io.BytesIO(data)
    try:
        return np.lib.format.read_array(f, allow_pickle=False)
    except ValueError:  # an object array: its body is a pickle
        f.seek(0)
        major, _ = np.lib.format.read_magic(f)
        if major == 1:
            np.lib.format.read_array_header_1_0(f)
        else:
            np.lib.format.read_array_header_2_0(f)
        return ArraysOnlyUnpickler(f).load()


def load_npz(path):
    """{name: array} of the `.npz` at `path`; a malformed or crafted file is DataLossError."""
    out = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                check_inflated(info.file_size, f"member {info.filename}", path)
                array = _read_member(archive.read(info))
                if not isinstance(array, np.ndarray):
                    raise TypeError(f"{info.filename} is a {type(array).__name__}, not an array")
                out[info.filename[:-4]] = array
    except (zipfile.BadZipFile, OSError, ValueError, TypeError, EOFError,
            pickle.UnpicklingError, zipfile.LargeZipFile) as e:
        raise errors.DataLossError(None, None, f"{path} is not a valid dataset .npz "
                                               f"file: {e}") from None
    return out
