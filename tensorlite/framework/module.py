"""`tf.Module`: a named container that finds its variables and submodules by walking its
attributes (lists, tuples and dicts included), as TensorFlow does.

Example:
    >>> class Dense(tf.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         with self.name_scope:
    ...             self.kernel = tf.Variable(tf.zeros([3, 2]), name="kernel")
    >>> [v.name for v in Dense().trainable_variables]
    ['dense/kernel:0']
"""
import functools
import re

from tensorlite.framework.name_scope import name_scope as _name_scope
from tensorlite.framework.name_scope import current_scope


# Callables run when an object gains state a checkpoint may hold (checkpoint/deferred.py's
# restoration of children that appear after a restore); empty while nothing waits.
CHILD_ADDED = []


def child_added():
    """Tells waiting restorations that some object may have a new child (a weight made, a
    trackable attribute set, an optimizer's slots made)."""
    for f in list(CHILD_ADDED):
        f()


def camel_to_snake(name):
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _attribute_order(key):
    """Attribute names in order; other keys (a tf.function method's cache entry) after
    them, so keys of mixed kinds never compare with each other."""
    return (0, key, "") if isinstance(key, str) else (1, type(key).__name__, repr(key))


class Module:
    """Base class for objects that own variables and submodules."""

    _TF_MODULE_IGNORED_PROPERTIES = frozenset()

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        else:
            self._check_name(name)
        self._name = name
        with _name_scope(name) as scope:
            self._scope_name = scope

    def __setattr__(self, key, value):
        object.__setattr__(self, key, value)
        if CHILD_ADDED:
            child_added()

    @staticmethod
    def _check_name(name):
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_.\-]*$", name):
            raise ValueError(f"'{name}' is not a valid module name. Module names must be "
                             f"valid Python identifiers (e.g. a valid class name).")

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        return _name_scope(self._scope_name)

    @property
    def variables(self):
        return tuple(self._flatten(lambda x: getattr(x, "_is_variable", False)))

    @property
    def trainable_variables(self):
        return tuple(self._flatten(lambda x: getattr(x, "_is_variable", False)
                                   and x.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._flatten(lambda x: getattr(x, "_is_variable", False)
                                   and not x.trainable))

    @property
    def submodules(self):
        return tuple(self._flatten(lambda x: isinstance(x, Module)))

    def _flatten(self, predicate, recursive=True):
        """Everything reachable from our attributes satisfying `predicate`, each once,
        in attribute-name order."""
        seen, out = {id(self)}, []

        def visit(obj, depth):
            if isinstance(obj, dict):
                for key in sorted(obj, key=str):
                    visit(obj[key], depth)
                return
            if isinstance(obj, (list, tuple)):
                for item in obj:
                    visit(item, depth)
                return
            if id(obj) in seen:
                return
            seen.add(id(obj))
            if predicate(obj):
                out.append(obj)
            if isinstance(obj, Module) and recursive:
                walk(obj, depth + 1)

        def walk(module, depth):
            attrs = vars(module)
            ignored = module._TF_MODULE_IGNORED_PROPERTIES
            for key in sorted(attrs, key=_attribute_order):
                if key not in ignored:
                    visit(attrs[key], depth)

        walk(self, 0)
        return out

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: runs `method` inside the module's name scope."""
        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return wrapped

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object named {self._name!r}>"


__all__ = ["Module", "current_scope"]
