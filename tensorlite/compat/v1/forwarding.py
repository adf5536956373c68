"""Module `__getattr__` for tf.compat.v1 namespaces that add TF1 names to a TF2 one."""
import importlib


def forward_to(target, own):
    """A `__getattr__` that looks names up in module `target` (loaded on first use).

    >>> __getattr__ = forward_to("tensorlite.nn", "tensorlite.compat.v1.nn")
    """
    def __getattr__(name):  # noqa: N807 - a module's attribute hook
        try:
            return getattr(importlib.import_module(target), name)
        except AttributeError:
            raise AttributeError(f"module {own!r} has no attribute {name!r}") from None
    return __getattr__
