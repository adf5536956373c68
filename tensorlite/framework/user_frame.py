"""Finds the user's file and line: the first stack frame outside the tensorlite package.

Errors and gradient explanations quote it so that a message points at the user's code,
not at tensorlite's internals.
"""
import os
import sys

# The package's directory as its code objects name it (`__file__` as imported: with a path
# entry like "bench/.." it keeps the "..", and so does every co_filename) and normalised:
# `filename.startswith(_PKG_DIR)` must hold for every module of the package either way.
_PKG_DIR = tuple(dict.fromkeys(os.path.dirname(os.path.dirname(path)) + os.sep for path in (
    __file__, os.path.abspath(__file__), os.path.realpath(__file__))))


def user_frame(skip=1):
    """Returns (filename, lineno, function) of the nearest frame outside tensorlite."""
    f = sys._getframe(skip)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return ("<tensorlite>", 0, "<module>")
    return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


def user_location(skip=1):
    """'file.py:12 in fn' for the nearest user frame."""
    filename, lineno, func = user_frame(skip + 1)
    return f"{filename}:{lineno} in {func}"
