"""Whether this process writes shared files (checkpoints, saved models, summaries).

Writers in lower layers ask `may_write()`; a higher layer that knows better (a multi-worker
distribution strategy, where only the chief writes) adds a guard. This keeps
`checkpoint/` and `keras/saving/` from importing `distribute/`.

Example:
    >>> GUARDS.append(lambda: is_chief())
    >>> may_write()
"""
GUARDS = []


def may_write():
    return all(guard() for guard in GUARDS)
