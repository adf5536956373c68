"""Objects loadable by name from a saved config, and safe mode, as Keras 3 has them.

A name in a file resolves only to the caller's `custom_objects`, the objects of the active
`custom_object_scope`s, and those registered with `register_keras_serializable` (or put in
`get_custom_objects()`); nothing named in a file is ever imported. Python code stored in a
file (a Lambda layer's function) loads only outside safe mode (`safe_mode=False`).

Example:
    >>> @tf.keras.utils.register_keras_serializable(package="MyLayers")
    ... class Scale(tf.keras.layers.Layer):
    ...     pass
    >>> tf.keras.utils.get_registered_name(Scale)
    'MyLayers>Scale'
"""
import base64
import builtins
import contextlib
import marshal
import threading
import types

_CUSTOM_OBJECTS = {}  # get_custom_objects(): registered name or plain name -> object
_REGISTERED_NAMES = {}  # object -> "package>name"
_local = threading.local()  # .scopes: custom_object_scope dicts; .safe_mode: bool
_UNSAFE_GLOBALLY = [False]


def register_keras_serializable(package="Custom", name=None):
    """`tf.keras.utils.register_keras_serializable`: makes a class or function loadable by
    name (`"package>name"`), with no `custom_objects` needed at load time."""
    if "/" in package or ">" in package:
        raise ValueError(f"package={package!r} may not contain '/' or '>'")

    def decorator(obj):
        registered = f"{package}>{name or obj.__name__}"
        if isinstance(obj, type) and not hasattr(obj, "get_config"):
            raise ValueError(f"Cannot register {obj.__name__}: it has no get_config(), so it "
                             f"could not be rebuilt from a saved config")
        old = _CUSTOM_OBJECTS.get(registered)
        if old is not None and old is not obj and _qualname(old) != _qualname(obj):
            raise ValueError(f"{registered} has already been registered to {old}")
        _CUSTOM_OBJECTS[registered] = obj
        _REGISTERED_NAMES[obj] = registered
        return obj
    return decorator


def _qualname(obj):
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"


def get_registered_name(obj):
    """The name `obj` is saved under: `"package>name"` if registered, else its own name."""
    return _REGISTERED_NAMES.get(obj, getattr(obj, "__name__", None))


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object saved as `name`, or None (no module is ever imported)."""
    return lookup(name, None, custom_objects) or (module_objects or {}).get(name)


def get_custom_objects():
    """`tf.keras.utils.get_custom_objects`: the global dict of loadable custom objects."""
    return _CUSTOM_OBJECTS


@contextlib.contextmanager
def custom_object_scope(*scopes):
    """`tf.keras.utils.custom_object_scope`: objects loadable by name inside the block."""
    stack = _local.__dict__.setdefault("scopes", [])
    merged = {}
    for s in scopes:
        merged.update(s or {})
    stack.append(merged)
    try:
        yield merged
    finally:
        stack.pop()


CustomObjectScope = custom_object_scope


@contextlib.contextmanager
def safe_mode_scope(safe_mode=True):
    """Loading inside the block refuses (True) or allows (False) code stored in the file."""
    old = getattr(_local, "safe_mode", None)
    _local.safe_mode = safe_mode
    try:
        yield
    finally:
        _local.safe_mode = old


def in_safe_mode():
    mode = getattr(_local, "safe_mode", None)
    if mode is None:
        return not _UNSAFE_GLOBALLY[0]
    return mode


def enable_unsafe_deserialization():
    """`tf.keras.config.enable_unsafe_deserialization`: allow Lambda code in every load."""
    _UNSAFE_GLOBALLY[0] = True


def lookup(class_name, registered_name, custom_objects):
    """The object saved as `registered_name` or `class_name`, or None."""
    sources = [custom_objects or {}, *reversed(getattr(_local, "scopes", [])), _CUSTOM_OBJECTS]
    for names in sources:
        for n in (registered_name, class_name):
            if n is not None and n in names:
                return names[n]
    # a file that saved a registered class under its bare name ("MyModel" for
    # "Custom>MyModel"): the one registered object of that name, if only one
    matches = [obj for key, obj in _CUSTOM_OBJECTS.items()
               if ">" in key and key.split(">", 1)[1] in (registered_name, class_name)]
    return matches[0] if len(matches) == 1 else None


def serialize_layer(layer):
    """A layer's config entry as Keras 3 writes it."""
    cls = type(layer)
    return {"module": cls.__module__, "class_name": cls.__name__,
            "config": layer.get_config(), "registered_name": get_registered_name(cls)}


# -- Python functions in a layer's config, by name (Keras 3's form) ---------------------------
def function_name_entry(value):
    """A callable argument of a layer's config as Keras 3 writes a user function (its name
    only: a file never carries code); any other value as it is."""
    if not callable(value):
        return value
    return {"module": "builtins", "class_name": "function",
            "config": getattr(value, "__name__", None),
            "registered_name": get_registered_name(value)}


def function_by_name(entry, what, custom_objects=None):
    """The function a `function_name_entry` names, from `custom_objects` or the registered
    objects (a ValueError naming it when neither has it); any other value as it is."""
    if not isinstance(entry, dict):
        return entry
    name = entry.get("config")
    found = lookup(name, entry.get("registered_name"), custom_objects)
    if found is None:
        raise ValueError(
            f"{what} is the function {name!r}, which a saved model names but does not "
            f"contain: pass it when loading, custom_objects={{{name!r}: {name}}}, or "
            f"register it with @keras.saving.register_keras_serializable()")
    return found


# -- Python functions (Lambda layers) --------------------------------------------------

def serialize_function(fn):
    """A function's entry: its registered name when it has one (loadable safely), and its
    bytecode (loadable only with safe_mode=False)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"cannot serialise {fn!r}: only Python functions can be saved")
    closure = None
    if fn.__closure__:
        try:
            closure = [_plain(c.cell_contents) for c in fn.__closure__]
        except TypeError as e:
            raise TypeError(f"cannot serialise {fn.__name__}: {e}; register it with "
                            f"@keras.utils.register_keras_serializable() instead") from None
    return {"class_name": "__lambda__" if fn.__name__ == "<lambda>" else "function",
            "config": {"name": fn.__name__, "registered_name": _REGISTERED_NAMES.get(fn),
                       "code": base64.b64encode(marshal.dumps(fn.__code__)).decode("ascii"),
                       "defaults": [_plain(d) for d in fn.__defaults__ or ()],
                       "closure": closure}}


def _plain(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    raise TypeError(f"it captures a {type(v).__name__}, which cannot be saved as plain data")


def deserialize_function(entry, custom_objects=None):
    """The function of `serialize_function`'s entry: by name if registered or given in
    `custom_objects`; from bytecode only outside safe mode."""
    config = entry.get("config") if isinstance(entry, dict) else None
    if not isinstance(config, dict):
        raise ValueError(f"Malformed function entry in a model config: {str(entry)[:200]}")
    found = lookup(config.get("name"), config.get("registered_name"), custom_objects)
    if found is not None:
        return found
    if in_safe_mode():
        raise ValueError(
            "Requested the deserialization of a `Lambda` layer with a Python function "
            f"({config.get('name')!r}) inside it. This carries a potential risk of arbitrary "
            "code execution and thus it is disallowed by default. If you trust the source of "
            "the saved model, you can pass `safe_mode=False` to the loading function in order "
            "to allow `Lambda` layer loading, or pass the function in `custom_objects`.")
    import tensorlite  # noqa: PLC0415 - the names a saved lambda most often uses
    code = marshal.loads(base64.b64decode(config["code"]))
    env = {"__builtins__": builtins, "tf": tensorlite, "keras": tensorlite.keras,
           **(custom_objects or {})}
    closure = tuple(types.CellType(v) for v in config.get("closure") or ()) or None
    return types.FunctionType(code, env, config.get("name"),
                              tuple(config.get("defaults") or ()) or None, closure)
