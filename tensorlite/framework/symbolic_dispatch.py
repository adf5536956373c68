"""Public API functions called on symbolic inputs dispatch to a handler: TF 2's Keras makes
`tf.concat([a, b], axis=-1)` or `tf.nn.relu(x)` on `tf.keras.Input` tensors a layer of the
functional model being built (TFOpLambda), so TF 2 code mixes layers and TF functions.

Each namespace module (the top-level `tf`, `tf.math`, `tf.nn`, ...) registers itself with
`expose(namespace, prefix)`. When Keras makes its first symbolic tensor (`tf.keras.Input`)
it installs its handler (a lower layer never imports Keras), and from then on each public
op function of those namespaces is a wrapper with the function's own signature that calls
it and, only when the call raises, asks the handler whether the arguments hold symbolic
tensors: if so the handler's layer is the result, otherwise the error goes on as it was.
A wrapper is compiled per distinct signature (from the code object: no `inspect`); the
eager path pays one plain Python call (~20-80 ns) and no argument scan. Compiling them all
takes ~25 ms, so programs that never build a functional model never pay it; a reference
to a function taken before the first `Input` (`concat = tf.concat`) stays unwrapped.

Example:
    >>> x = tf.keras.Input(shape=(4,))
    >>> y = tf.nn.relu(x)          # a layer named "tf.nn.relu" in the model
    >>> tf.keras.Model(x, y)
"""
import linecache
import os
import types

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


class _NoSymbols:
    """The handler before Keras is loaded: no argument is symbolic."""

    @staticmethod
    def symbolic(args, kwargs):
        return False

    @staticmethod
    def call(symbol, fn, args, kwargs):  # pragma: no cover - never called
        raise AssertionError("no symbolic handler is installed")


_HANDLER = [_NoSymbols]
_FACTORIES = {}  # signature shape -> factory(fn, symbol, defaults, kwdefaults, handler)
_SPACES = []  # (namespace dict, prefix, modules) of each registered namespace module


def install(handler):
    """Sets the handler and wraps the registered namespaces' functions (at once, and
    those registered later as they register): `handler.symbolic(args, kwargs)` says
    whether a failed call's arguments hold symbolic tensors; `handler.call(symbol, fn,
    args, kwargs)` then makes the call symbolically (`symbol`: the function's public path,
    "math.reduce_sum"). Installing the same handler again does nothing."""
    if _HANDLER[0] is handler:
        return
    _HANDLER[0] = handler
    for space in _SPACES:
        _wrap(*space)


def _shape(code, defaults, kwdefaults):
    """(positional names, how many of them are positional-only, keyword-only names,
    *args name, **kwargs name, how many positional defaults, keyword-only names with
    defaults) of a function's code."""
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    at = n_pos + n_kw
    varargs = names[at] if code.co_flags & _CO_VARARGS else None
    at += varargs is not None
    varkw = names[at] if code.co_flags & _CO_VARKEYWORDS else None
    return (names[:n_pos], code.co_posonlyargcount, names[n_pos:n_pos + n_kw], varargs,
            varkw, len(defaults or ()), tuple(sorted(kwdefaults or ())))


def _factory(shape):
    """Compiles (once per shape) a factory making wrappers of that signature."""
    factory = _FACTORIES.get(shape)
    if factory is not None:
        return factory
    pos, n_posonly, kwonly, varargs, varkw, n_defaults, kw_with_defaults = shape
    params = []
    first_default = len(pos) - n_defaults
    for i, name in enumerate(pos):
        params.append(f"{name}=_d[{i - first_default}]" if i >= first_default else name)
        if n_posonly and i == n_posonly - 1:
            params.append("/")
    if varargs:
        params.append(f"*{varargs}")
    elif kwonly:
        params.append("*")
    params += [f"{k}=_kd[{k!r}]" if k in kw_with_defaults else k for k in kwonly]
    if varkw:
        params.append(f"**{varkw}")
    args = "(" + "".join(f"{n}, " for n in pos) + ")" + (f" + {varargs}" if varargs else "")
    kwargs = "{" + "".join(f"{k!r}: {k}, " for k in kwonly) + "}"
    if varkw:
        kwargs = f"dict({kwargs}, **{varkw})"
    call = ", ".join([*pos, *([f"*{varargs}"] if varargs else []), *(f"{k}={k}" for k in kwonly),
                      *([f"**{varkw}"] if varkw else [])])
    source = (f"def factory(_fn, _symbol, _d, _kd, _handler):\n"
              f"    def op({', '.join(params)}):\n"
              f"        try:\n"
              f"            return _fn({call})\n"
              f"        except Exception:\n"
              f"            _h = _handler[0]\n"
              f"            if not _h.symbolic({args}, {kwargs}):\n"
              f"                raise\n"
              f"        return _h.call(_symbol, _fn, {args}, {kwargs})\n"
              f"    return op\n")
    # named inside the package, so errors quote the user's line, not the wrapper's, and
    # autograph leaves it alone; its text is registered for tracebacks
    filename = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            f"<api wrapper ({', '.join(params)})>")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {}
    exec(compile(source, filename, "exec"), scope)  # noqa: S102
    factory = _FACTORIES[shape] = scope["factory"]
    return factory


def dispatching(fn, symbol):
    """`fn` wrapped so that a call on symbolic arguments goes to the handler."""
    code = fn.__code__
    factory = _factory(_shape(code, fn.__defaults__, fn.__kwdefaults__))
    op = factory(fn, symbol, fn.__defaults__ or (), fn.__kwdefaults__ or {}, _HANDLER)
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(op, attr, getattr(fn, attr))
    op.__wrapped__ = fn
    op.__dict__.update(fn.__dict__)
    op._tf_api_symbol = symbol
    return op


def expose(namespace, prefix="", modules=("tensorlite.ops.",)):
    """Registers a namespace module's dict: its public functions that come from `modules`
    (by default the op modules) are wrapped, each under the public path `prefix + name`,
    once a handler is installed."""
    _SPACES.append((namespace, prefix, modules))
    if _HANDLER[0] is not _NoSymbols:
        _wrap(namespace, prefix, modules)


def _wrap(namespace, prefix, modules):
    for name, value in list(namespace.items()):
        if name.startswith("_") or type(value) is not types.FunctionType or \
                getattr(value, "_tf_api_symbol", None) is not None or \
                not (value.__module__ or "").startswith(modules):
            continue
        namespace[name] = dispatching(value, prefix + name)
