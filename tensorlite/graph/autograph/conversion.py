"""Converting a Python function: parse its source, transform it (lowering.py,
transformer.py), compile it under the user's file name with the user's line numbers, and
rebuild it with the original globals and closure values.

Functions from tensorlite itself, the standard library and installed packages run as they
are, as do builtins, lambdas, callable objects and functions marked with
`tf.autograph.experimental.do_not_convert`. A function whose source cannot be read runs as
it is, with TensorFlow's warning.

Example:
    >>> def f(x):
    ...     return x * 2 if x > 0 else -x
    >>> g = converted(f)   # calls ag__.if_exp: a tf.cond when x is a graph tensor
"""
import ast
import functools
import inspect
import os
import sysconfig
import textwrap
import types
import warnings

from tensorlite.graph.autograph import transformer

_DO_NOT_CONVERT = "__ag_do_not_convert__"
_FACTORIES = {}  # code object -> (factory, converted source) or None (not convertible)
_WARNED = set()
_PKG = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
_LIBRARY_DIRS = tuple(p + os.sep for p in {
    sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def do_not_convert(func=None):
    """`tf.autograph.experimental.do_not_convert`: `func` runs as written inside
    tf.function (its Python `if`/`while` on tensors are not converted).

    >>> @tf.autograph.experimental.do_not_convert
    ... def helper(x):
    ...     return x + 1
    """
    if func is None:
        return do_not_convert
    try:
        setattr(func, _DO_NOT_CONVERT, True)
        return func
    except (AttributeError, TypeError):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        setattr(wrapper, _DO_NOT_CONVERT, True)
        return wrapper


def _user_function(f):
    """True for a plain Python function of the user's (not tensorlite's or a library's)."""
    if not isinstance(f, types.FunctionType) or getattr(f, _DO_NOT_CONVERT, False):
        return False
    code = f.__code__
    if "ag__" in code.co_freevars:  # made by converted code: converted already
        return False
    if f.__name__ == "<lambda>" or code.co_flags & (inspect.CO_GENERATOR |
                                                     inspect.CO_COROUTINE |
                                                     inspect.CO_ASYNC_GENERATOR):
        return False
    path = os.path.abspath(code.co_filename)
    return not path.startswith(_PKG) and not path.startswith(_LIBRARY_DIRS) and \
        not code.co_filename.startswith("<")


def converted(f):
    """The callable to run in place of `f` in converted code."""
    if isinstance(f, types.MethodType):
        inner = converted(f.__func__)
        return f if inner is f.__func__ else types.MethodType(inner, f.__self__)
    if isinstance(f, functools.partial):
        inner = converted(f.func)
        return f if inner is f.func else functools.partial(inner, *f.args, **f.keywords)
    if not _user_function(f):
        return f
    entry = _factory(f)
    if entry is None:
        return f
    return _instantiate(f, entry[0])


def _instantiate(f, factory):
    from tensorlite.graph.autograph import operators  # noqa: PLC0415
    cells = []
    for cell in f.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # an empty cell (a name bound later): keep Python's error
            cells.append(operators.Undefined("<free variable>"))
    new = factory(operators, *cells)
    new.__defaults__, new.__kwdefaults__ = f.__defaults__, f.__kwdefaults__
    new.__dict__.update(f.__dict__)
    new.__wrapped__ = f
    return new


def _factory(f):
    code = f.__code__
    if code in _FACTORIES:
        return _FACTORIES[code]
    try:
        entry = _build(f)
    except (OSError, TypeError, SyntaxError, IndentationError) as e:
        entry = None
        if code not in _WARNED:
            _WARNED.add(code)
            warnings.warn(f"AutoGraph could not transform {f.__qualname__} (defined in "
                          f"{code.co_filename}:{code.co_firstlineno}) and will run it as-is. "
                          f"Cause: {type(e).__name__}: {e}", stacklevel=4)
    _FACTORIES[code] = entry
    return entry


def parse_function(f):
    """The ast.FunctionDef of `f` with the line numbers of its file (decorators dropped)."""
    source = textwrap.dedent(inspect.getsource(f))
    tree = ast.parse(source)
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        raise TypeError(f"the source of {f.__qualname__} is not a plain `def`")
    fdef = tree.body[0]
    ast.increment_lineno(tree, f.__code__.co_firstlineno - 1)
    fdef.decorator_list = []
    return fdef


def _build(f):
    fdef = parse_function(f)
    freevars = list(f.__code__.co_freevars)
    transformer.convert_function_def(fdef)
    fdef.name = f.__name__
    source = ast.unparse(fdef)
    params = [ast.arg("ag__")] + [ast.arg(n) for n in freevars]
    factory = ast.FunctionDef(
        name="autograph_factory",
        args=ast.arguments(posonlyargs=[], args=params, vararg=None, kwonlyargs=[],
                           kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, ast.Return(value=ast.Name(fdef.name, ast.Load()))],
        decorator_list=[], returns=None)
    ast.copy_location(factory, fdef)
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    compiled = compile(module, f.__code__.co_filename, "exec")
    scratch = {}
    exec(compiled, scratch)  # noqa: S102 - only defines the factory (user's own source)
    made = scratch["autograph_factory"]
    factory_fn = types.FunctionType(made.__code__, f.__globals__, "autograph_factory")
    return factory_fn, source


def to_graph(f):
    """`tf.autograph.to_graph`: the converted function (Python control flow on tensors
    becomes tf.cond / tf.while_loop when it runs in a graph).

    >>> g = tf.autograph.to_graph(lambda x: x)  # lambdas run as they are
    """
    return converted(f)


def to_code(f):
    """`tf.autograph.to_code`: the source code AutoGraph generates for `f`.

    >>> def f(x):
    ...     if x > 0:
    ...         x = -x
    ...     return x
    >>> "ag__.if_stmt" in tf.autograph.to_code(f)
    True
    """
    target = f.python_function if hasattr(f, "python_function") else f
    target = getattr(target, "__func__", target)
    if not isinstance(target, types.FunctionType):
        raise TypeError(f"to_code expects a Python function, got {type(f).__name__}")
    entry = _factory(target)
    if entry is None:
        raise ValueError(f"AutoGraph could not convert {target.__qualname__}: its source is "
                         f"not available")
    return entry[1] + "\n"
