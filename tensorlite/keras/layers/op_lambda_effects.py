"""Which public functions a saved TFOpLambda layer may call: those free of effects.

A Keras file names the TensorFlow function of each TFOpLambda layer ("concat",
"nn.relu"); loading calls it (on probe tensors while the model is rebuilt, then on every
predict) with arguments the file chose. A function that prints, writes files, or runs Python
callbacks (`tf.print(x, output_stream="file:///any/path")`, `tf.io.write_file`,
`tf.py_function`) would let the file act outside what the user asked, so loading in safe
mode allows only functions whose every reachable op is free of such effects.

"Reachable" is found statically from the function's code, transitively: the global names,
attributes and imports its bytecode loads are resolved; registry ops among them are judged
by their declared `effects` (framework/registry.py: "io", "callback" and "pure_callback"
refuse), tensorlite functions and classes are followed, and a few Python facilities that act
outside the process's tensors are refused wherever they appear (`open`, `print`, `exec`,
the `os`/`sys` calls that write or run things, NumPy's file functions, other modules that
reach files, sockets or processes, assignments to module globals). Within what it follows
the walk over-approximates (a branch never taken still counts). It does not follow the
framework's own code (dispatch, tensors, dtypes: the substrate every op runs through, which
acts only as the ops it runs), nor methods of objects that exist only at run time; so
framework-level state changes (`tf.random.set_seed`) are not seen, which matters only if
such a function were ever made resolvable by name (today only the op namespaces are).

As defence in depth, `guard()` refuses an op with such effects that a loaded layer's call
dispatches anyway (framework/dispatch.py's BEFORE hooks, active only during such calls).

Example:
    >>> unsafe_reasons(tf.concat)
    []
    >>> unsafe_reasons(tf.print)[0]
    'can run the op PrintV2 (io)'
"""
import contextlib
import dis
import functools
import importlib
import sys
import threading
import types

from tensorlite.framework import dispatch, errors, registry

# Python builtins that reach outside the process's tensors, or run code given as data
_BUILTINS = {"open", "print", "exec", "eval", "compile", "__import__", "input",
             "breakpoint", "exit", "quit"}
# Modules whose use is fine: computations without files, streams, processes or sockets
_PURE_MODULES = {"numpy", "math", "cmath", "functools", "itertools", "operator",
                 "collections", "numbers", "threading", "contextlib", "inspect", "types",
                 "re", "re2", "struct", "warnings", "typing", "abc", "enum", "weakref",
                 "copy", "heapq", "bisect", "string", "zlib", "hashlib", "unicodedata",
                 "dataclasses", "linecache", "fractions", "decimal", "time", "numba",
                 "builtins", "_thread", "json", "base64", "binascii", "codecs", "random",
                 "textwrap", "keyword", "dis", "array", "scipy", "ml_dtypes", "opt_einsum",
                 "concurrent", "queue", "traceback", "difflib", "pprint", "reprlib",
                 "importlib"}  # importlib's running parts (import_module) are _IO_ATTRS
# Attributes that read or write files, run programs or change the interpreter, whatever
# object they are looked up on (np.save, arr.tofile, os.remove, sys.stdout, ...)
_IO_ATTRS = {"save", "savez", "savez_compressed", "savetxt", "load", "loadtxt",
             "genfromtxt", "fromfile", "tofile", "memmap", "fromregex", "dump",
             "remove", "unlink", "rmdir", "removedirs", "rename", "renames", "mkdir",
             "makedirs", "chmod", "chown", "symlink", "link", "truncate", "system", "popen",
             "spawnv", "spawnl", "execv", "execve", "execl", "fork", "kill", "putenv",
             "unsetenv", "chdir", "stdout", "stderr", "stdin", "__stdout__", "__stderr__",
             "settrace", "setprofile", "setrecursionlimit", "exit", "write_text",
             "write_bytes", "open", "fdopen", "writelines", "import_module", "reload", "flush"}
# Modules whose classes are files, streams, processes or sockets (io.FileIO, Popen, ...)
_IO_MODULES = {"io", "_io", "os", "posix", "nt", "subprocess", "socket", "shutil", "tempfile",
               "pathlib", "pickle", "shelve", "ctypes", "urllib", "http", "ftplib", "smtplib",
               "zipfile", "tarfile", "gzip", "bz2", "lzma", "sqlite3", "multiprocessing",
               "h5py", "logging", "mmap", "asyncio", "selectors", "ssl"}
_CONTAINERS = (dict, list, tuple, set, frozenset)
_STORES_GLOBAL = "<stores a module global>"  # a marker among a code object's global names


@functools.lru_cache(maxsize=None)
def _code_names(code):
    """(global names, attribute names, imported module names, string constants, nested
    code objects) the bytecode of one code object loads."""
    glob, attrs, imports, strings, nested = set(), set(), [], set(), []
    for ins in dis.get_instructions(code):
        name = ins.opname
        if name in ("LOAD_GLOBAL", "LOAD_NAME"):
            glob.add(ins.argval)
        elif name in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            glob.add(_STORES_GLOBAL)
        elif name in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "IMPORT_FROM"):
            attrs.add(ins.argval)
        elif name == "IMPORT_NAME":
            imports.append(ins.argval)
        elif name == "LOAD_CONST":
            if isinstance(ins.argval, str):
                strings.add(ins.argval)
            elif isinstance(ins.argval, types.CodeType):
                nested.append(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const not in nested:
            nested.append(const)
    return frozenset(glob), frozenset(attrs), tuple(imports), frozenset(strings), \
        tuple(nested)


class _Walk:
    """One transitive walk from a root function, collecting reasons to refuse it."""

    def __init__(self):
        self.seen = set()
        self.reasons = []
        self.todo = []

    def add(self, value, attrs=frozenset(), depth=0):
        """Queues `value`, found in code that also loads the attribute names `attrs`."""
        self.todo.append((value, attrs, depth))

    def run(self, root):
        self.add(root)
        while self.todo:
            self._visit(*self.todo.pop())
        return self.reasons

    def _refuse(self, reason):
        if reason not in self.reasons:
            self.reasons.append(reason)

    def _visit(self, value, attrs, depth):
        if isinstance(value, registry.Op):
            if value.effects in registry.UNSAFE_EFFECTS:
                self._refuse(f"can run the op {value.name} ({value.effects})")
            return
        if isinstance(value, (str, bytes, int, float, complex, bool, type(None))):
            return
        key = id(value)
        if key in self.seen:
            return
        self.seen.add(key)
        if isinstance(value, types.ModuleType):
            self._module(value, attrs)
        elif isinstance(value, _CONTAINERS):
            if depth < 3:
                items = value.values() if isinstance(value, dict) else value
                for v in items:
                    self.add(v, attrs, depth + 1)
        else:
            self._callable(value, depth)

    def _callable(self, value, depth):
        fn = _unwrap(value)
        if fn is not value:
            self.add(fn, depth=depth)
        elif isinstance(fn, types.FunctionType):
            self._function(fn)
        elif isinstance(fn, type):
            if _ours(fn):
                self._class(fn)
            elif (fn.__module__ or "").split(".")[0] in _IO_MODULES:
                self._refuse(f"uses the class {fn.__module__}.{fn.__qualname__}")
        elif _ours(type(fn)):
            self.add(type(fn), depth=depth)  # an instance: what its methods do
        elif callable(fn):
            self._foreign_callable(fn)

    def _foreign_callable(self, fn):
        """A function of C or of another library (os.remove in a closure, builtins.open in a
        table): judged by its module and name, as names in code are."""
        name = getattr(fn, "__name__", "")
        module = getattr(fn, "__module__", None) or type(fn).__module__ or ""
        if module == "builtins" and name in _BUILTINS or name in _IO_ATTRS:
            self._refuse(f"calls {module}.{name}")
        elif module.split(".")[0] in ("os", "posix", "nt", "sys", "shutil", "io", "_io"):
            if name in _IO_ATTRS:
                self._refuse(f"calls {module}.{name}")
        elif not _ours(fn) and module.split(".")[0] not in _PURE_MODULES:
            self._refuse(f"calls {module}.{name}")

    def _function(self, fn):
        if not _ours(fn):
            return  # a third-party function (its module was judged where it was loaded)
            # or the framework's (see _ours)
        for cell in fn.__closure__ or ():
            try:
                self.add(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        for default in (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values()):
            self.add(default)
        self._code(fn.__code__, fn.__globals__)

    def _code(self, code, env):
        glob, attrs, imports, strings, nested = _code_names(code)
        for name in glob:
            if name == _STORES_GLOBAL:
                self._refuse(f"changes the module state of {env.get('__name__')}")
            elif name in env:
                self.add(env[name], attrs)
            elif name in _BUILTINS:
                self._refuse(f"calls Python's {name}()")
        for name in imports:
            self._imported(name, attrs)
        for name in attrs & _IO_ATTRS:
            self._refuse(f"uses the attribute {name!r}, which reads or writes files")
        for name in strings:
            op = registry.REGISTRY.get(name)
            if op is not None:
                self.add(op)
        for inner in nested:
            self._code(inner, env)

    def _imported(self, name, attrs):
        if name.split(".")[0] == "tensorlite":
            module = sys.modules.get(name) or importlib.import_module(name)
            self.add(module, attrs)
        else:
            self._foreign(name, attrs)

    def _module(self, module, attrs):
        name = module.__name__
        if not name.startswith("tensorlite"):
            self._foreign(name, attrs)
            return
        if name.startswith("tensorlite.framework"):
            return  # see _ours
        for attr in attrs:
            if attr in module.__dict__:
                self.add(module.__dict__[attr], attrs)

    def _foreign(self, name, attrs):
        top = name.split(".")[0]
        if top in ("os", "posixpath", "ntpath", "sys"):
            pass  # their acting attributes are _IO_ATTRS, refused wherever they appear
        elif top not in _PURE_MODULES:
            self._refuse(f"uses the module {name}")

    def _class(self, cls):
        for klass in cls.__mro__:
            if not _ours(klass):
                continue
            for value in vars(klass).values():
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                elif isinstance(value, property):
                    value = [value.fget, value.fset, value.fdel]
                if isinstance(value, (types.FunctionType, list)):
                    self.add(value)


def _unwrap(value):
    if isinstance(value, functools.partial):
        return value.func
    if isinstance(value, types.MethodType):
        return value.__func__
    return getattr(value, "__wrapped__", value) if callable(value) else value


def _ours(obj):
    """Whether the walk follows `obj`'s code: tensorlite's, except the framework's, the
    substrate every op runs on (dispatch, tensors, dtypes), which acts only as the ops it
    is asked to run, and those are judged by their declared effects."""
    module = getattr(obj, "__module__", None) or ""
    return module.startswith("tensorlite") and not module.startswith("tensorlite.framework")


_CACHE = {}


def unsafe_reasons(fn):
    """Why `fn` may not be called by a layer loaded in safe mode: a list of reasons such as
    "can run the op PrintV2 (io)"; empty when every op it reaches is free of effects."""
    key = id(_unwrap(fn))
    if key not in _CACHE:
        reasons = _Walk().run(fn)
        reasons.sort(key=lambda r: not r.startswith("can run the op"))  # the ops first
        _CACHE[key] = (fn, reasons)  # fn kept alive so its id stays its own
    return list(_CACHE[key][1])


def check_loadable(symbol, fn):
    """Raises ValueError, as Keras's safe-mode refusals do, when `fn` (the function a file
    names as `tf.<symbol>`) has effects; nothing of it has run."""
    reasons = unsafe_reasons(fn)
    if reasons:
        raise ValueError(
            f"Requested the deserialization of a TFOpLambda layer calling tf.{symbol}, which "
            f"{'; '.join(reasons[:3])}. A saved model may only call TensorFlow functions "
            f"that compute on tensors, so this is refused in safe mode. If you trust the "
            f"source of the file, pass `safe_mode=False` to the loading function (or call "
            f"`tf.keras.config.enable_unsafe_deserialization()`).")


# -- defence in depth: the ops a loaded layer's call dispatches ----------------------------
_GUARDED = threading.local()  # .symbol: the loaded layer's function being called


def _before(op):
    symbol = getattr(_GUARDED, "symbol", None)
    if symbol is not None and op is not None and op.effects in registry.UNSAFE_EFFECTS:
        raise errors.PermissionDeniedError(
            None, None,
            f"tf.{symbol}, called by a layer loaded in safe mode, tried to run the op "
            f"{op.name}, which has effects ({op.effects}); it was refused before running. "
            f"Load the model with safe_mode=False if you trust the file's source")


_GUARD_COUNT = [0]
_GUARD_LOCK = threading.Lock()


@contextlib.contextmanager
def guard(symbol):
    """Inside the block this thread's dispatched ops with effects raise
    PermissionDeniedError before they run; other threads are unaffected."""
    outer = getattr(_GUARDED, "symbol", None)
    _GUARDED.symbol = symbol
    with _GUARD_LOCK:
        _GUARD_COUNT[0] += 1
        if _GUARD_COUNT[0] == 1:
            dispatch.BEFORE.append(_before)
    try:
        yield
    finally:
        _GUARDED.symbol = outer
        with _GUARD_LOCK:
            _GUARD_COUNT[0] -= 1
            if _GUARD_COUNT[0] == 0 and _before in dispatch.BEFORE:
                dispatch.BEFORE.remove(_before)


