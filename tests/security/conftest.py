"""Shared fixtures of the security tests: a canary file that a crafted input must never
create or write, and a snapshot of a directory tree to prove nothing outside the target
directory was written or deleted."""
import os

import pytest


@pytest.fixture
def canary(tmp_path):
    """A path that no loader may create: any crafted input naming it fails the test if the
    file exists afterwards."""
    path = tmp_path / "canary"
    yield path
    assert not path.exists(), "a crafted input made tensorlite create or write the canary"


def tree_state(root):
    """{relative path: (size, mtime_ns)} of every file and directory under `root`."""
    state = {}
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(base, name)
            st = os.lstat(full)
            state[os.path.relpath(full, root)] = (st.st_size, st.st_mtime_ns)
    return state
