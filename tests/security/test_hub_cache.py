"""tensorlite.hub's cache as a hostile user sees it (issue 29): cleanup removes only the
temporary directories whose marker proves they are this host's and their process is dead
(a user's `my_results.tmp-999999/`, another host's live download, a directory without a
valid marker all survive); archives that lack a SavedModel, are cut off, inflate past the
cap, or carry crafted members are refused with TensorFlow's error classes, nothing is
written outside the cache, nothing half-made is cached, and the next load of a good
archive works. Archives are served by a real HTTP server on 127.0.0.1."""
import gzip
import io
import json
import os
import socket
import tarfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorlite as tf
import tensorlite.hub as hub
from tensorlite.framework import size_limits
from tensorlite.hub import archive, downloads
from tensorlite.hub import resolver as hub_resolver
from tests.security.conftest import tree_state
from tests.test_hub import EXPECTED, _Server, _tarball
from tests.interop.shared_data import X


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TFHUB_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    return tmp_path / "cache"


@pytest.fixture
def server():
    s = _Server(_tarball())
    yield s
    s.close()


@pytest.fixture
def small_cap():
    size_limits.set_decompression_cap(1 << 20)
    yield 1 << 20
    size_limits.set_decompression_cap(None)


def _dead_pid():
    """The pid of a child that has exited and been reaped: no process runs under it."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert not downloads.atomic.pid_alive(pid)
    return pid


def _fake_download(cache, pid, host=None, token="ab" * 16, marker=None):
    """A directory named as the resolver names its temporaries, with a file in it and
    (unless marker is False) a marker naming `host` and `pid`."""
    host = socket.gethostname() if host is None else host
    path = cache / f"{'0' * 40}.tmp-{pid}-{downloads.host_tag(host)}-{token}"
    path.mkdir()
    (path / "partial.bin").write_bytes(b"half a model")
    if marker is not False:
        data = marker if marker is not None else {
            "tool": "tensorlite.hub", "host": host, "pid": pid, "token": token,
            "created": 0.0}
        (path / downloads.MARKER).write_text(json.dumps(data))
    return path


def _load_ok(url):
    np.testing.assert_allclose(hub.load(url)(X).numpy(), EXPECTED, atol=1e-6)


# -- cleanup ---------------------------------------------------------------------------------

def test_users_tmp_named_files_survive_cleanup(cache, server):
    pid = _dead_pid()
    mine = cache / f"my_results.tmp-{pid}"
    mine.mkdir()
    (mine / "results.csv").write_text("precious")
    (cache / f"notes.txt.tmp-{pid}").write_text("precious too")
    (cache / "999999").mkdir()
    before = tree_state(cache)
    _load_ok(server.url)
    after = tree_state(cache)
    assert {k: v for k, v in after.items() if k in before} == before


def test_our_dead_download_is_removed(cache, server):
    stale = _fake_download(cache, _dead_pid())
    _load_ok(server.url)
    assert not stale.exists()
    assert not [n for n in os.listdir(cache) if ".tmp-" in n]


def test_a_real_killed_download_is_removed(cache, server):
    pid = os.fork()
    if pid == 0:  # a resolver process that dies right after making its temporary
        downloads.make_temp_dir(str(cache), str(cache / ("1" * 40)))
        os._exit(0)
    os.waitpid(pid, 0)
    assert [n for n in os.listdir(cache) if ".tmp-" in n]
    _load_ok(server.url)
    assert not [n for n in os.listdir(cache) if ".tmp-" in n]


@pytest.mark.parametrize("case", [
    "other_host", "other_host_marker_in_our_name", "no_marker", "wrong_token",
    "wrong_tool", "corrupt_marker", "live_pid", "marker_is_symlink"])
def test_unproven_temporaries_survive_cleanup(cache, server, tmp_path, case):
    pid = _dead_pid()
    if case == "other_host":
        path = _fake_download(cache, pid, host="another-host.example")
    elif case == "other_host_marker_in_our_name":
        path = _fake_download(cache, pid, marker={
            "tool": "tensorlite.hub", "host": "another-host.example", "pid": pid,
            "token": "ab" * 16})
    elif case == "no_marker":
        path = _fake_download(cache, pid, marker=False)
    elif case == "wrong_token":
        path = _fake_download(cache, pid, marker={
            "tool": "tensorlite.hub", "host": socket.gethostname(), "pid": pid,
            "token": "cd" * 16})
    elif case == "wrong_tool":
        path = _fake_download(cache, pid, marker={
            "tool": "something-else", "host": socket.gethostname(), "pid": pid,
            "token": "ab" * 16})
    elif case == "corrupt_marker":
        path = _fake_download(cache, pid, marker=False)
        (path / downloads.MARKER).write_text('{"tool": "tensorlite.hub", "host"')
    elif case == "live_pid":  # a download running now in another process of this host
        path = _fake_download(cache, os.getppid())
    else:
        path = _fake_download(cache, pid, marker=False)
        real = tmp_path / "elsewhere.json"
        real.write_text(json.dumps({"tool": "tensorlite.hub", "host": socket.gethostname(),
                                    "pid": pid, "token": "ab" * 16}))
        os.symlink(real, path / downloads.MARKER)
    before = tree_state(path)
    _load_ok(server.url)
    assert path.is_dir() and tree_state(path) == before


def test_temporary_named_with_an_impossible_pid_survives(cache, server):
    path = cache / f"{'3' * 40}.tmp-9999999999-{downloads.host_tag()}-{'ab' * 16}"
    path.mkdir()
    (path / "data").write_text("x")
    _load_ok(server.url)
    assert (path / "data").read_text() == "x"


def test_empty_temporary_of_a_dead_resolver_is_removed(cache, server):
    """Killed between mkdir and the marker: empty, so os.rmdir can remove nothing else."""
    path = cache / f"{'2' * 40}.tmp-{_dead_pid()}-{downloads.host_tag()}-{'ef' * 16}"
    path.mkdir()
    _load_ok(server.url)
    assert not path.exists()


# -- archives --------------------------------------------------------------------------------

def _member(name, data=b"x", kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data if kind == tarfile.REGTYPE else None


def _model_members():
    """The fixture's members (a loadable SavedModel), for adding crafted ones."""
    out = []
    with tarfile.open(fileobj=io.BytesIO(_tarball()), mode="r:gz") as tar:
        for m in tar.getmembers():
            out.append((m, tar.extractfile(m).read() if m.isfile() else None))
    return out


def _without_saved_model():
    return _tarball([(m, d) for m, d in _model_members() if "saved_model" not in m.name])


def _truncated():
    data = _tarball()
    return data[:len(data) // 2]


def _truncated_tar_in_gzip():
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for m, d in _model_members():
            tar.addfile(m, io.BytesIO(d) if d is not None else None)
    return gzip.compress(raw.getvalue()[:len(raw.getvalue()) // 2])


def _inflating():  # 16 MiB of zeros: about 1000 times its compressed size
    return _tarball(_model_members() + [_member("variables/big.bin", b"\0" * (16 << 20))])


def _many_small():  # each member under the cap, together over it
    return _tarball(_model_members() + [_member(f"assets/part{i}.bin", b"\0" * (128 << 10))
                                        for i in range(12)])


_GOOD_GZ = _tarball()
_GOOD_TAR = gzip.decompress(_GOOD_GZ)

CRAFTED = {
    "no_saved_model": (_without_saved_model, tf.errors.DataLossError, "no saved_model.pb"),
    "truncated_gzip": (_truncated, tf.errors.DataLossError, "valid compressed model"),
    "truncated_tar": (_truncated_tar_in_gzip, tf.errors.DataLossError, "model archive"),
    "inflates_1000x": (_inflating, tf.errors.ResourceExhaustedError,
                       "TENSORLITE_MAX_DECOMPRESSED_BYTES"),
    "many_members_over_cap": (_many_small, tf.errors.ResourceExhaustedError,
                              "decompressed archive"),
    "dotdot": (lambda: _tarball(_model_members() + [_member("../../canary")]),
               tf.errors.DataLossError, "outside the archive"),
    "dotdot_inside": (lambda: _tarball(_model_members() + [_member("assets/../../canary")]),
                      tf.errors.DataLossError, "outside the archive"),
    "absolute": (lambda: _tarball(_model_members() + [_member("/tmp/tl_hub_abs_canary")]),
                 tf.errors.DataLossError, "outside the archive"),
    "symlink_out": (lambda: _tarball(_model_members() + [
        _member("assets", kind=tarfile.SYMTYPE, link="../.."),
        _member("assets/canary")]), tf.errors.DataLossError, "is a link"),
    "hardlink_out": (lambda: _tarball(_model_members() + [
        _member("variables/x", kind=tarfile.LNKTYPE, link="../../canary")]),
        tf.errors.DataLossError, "is a link"),
    "device": (lambda: _tarball(_model_members() + [_member("dev", kind=tarfile.CHRTYPE)]),
               tf.errors.DataLossError, "device or special file"),
    "fifo": (lambda: _tarball(_model_members() + [_member("pipe", kind=tarfile.FIFOTYPE)]),
             tf.errors.DataLossError, "device or special file"),
    "name_too_long": (lambda: _tarball(_model_members() + [_member("assets/" + "a" * 300)]),
                      tf.errors.DataLossError, "cannot be a file name"),
    "file_then_dir": (lambda: _tarball(_model_members() + [
        _member("assets/a"), _member("assets/a/b")]), tf.errors.DataLossError, "conflicts"),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_archive_is_refused_and_nothing_is_cached(cache, tmp_path, small_cap,
                                                          canary, name):
    make, error, match = CRAFTED[name]
    outside = tree_state(tmp_path)
    server = _Server(make())
    try:
        with pytest.raises(error, match=match) as info:
            hub.resolve(server.url)
        assert "127.0.0.1" in str(info.value)  # names the archive
        assert os.listdir(cache) == []  # nothing cached, no temporary left
        after = tree_state(tmp_path)
        assert {k: v for k, v in after.items() if not k.startswith("cache")} == \
            {k: v for k, v in outside.items() if not k.startswith("cache")}
        assert not os.path.exists("/tmp/tl_hub_abs_canary")
        server.body = _tarball()  # the same handle, now a good archive: loads at once
        _load_ok(server.url)
    finally:
        server.close()


def test_member_count_bomb_is_refused(cache, monkeypatch):
    monkeypatch.setattr(archive, "MAX_MEMBERS", 20)
    server = _Server(_tarball(_model_members() + [_member(f"assets/{i}") for i in range(30)]))
    try:
        with pytest.raises(tf.errors.ResourceExhaustedError, match="more than 20 members"):
            hub.resolve(server.url)
    finally:
        server.close()
    assert os.listdir(cache) == []


def test_download_larger_than_the_cap_is_refused(cache, small_cap):
    server = _Server(os.urandom(2 << 20))
    try:
        with pytest.raises(tf.errors.ResourceExhaustedError, match="download"):
            hub.resolve(server.url)
    finally:
        server.close()
    assert os.listdir(cache) == []


def test_http_404_is_not_found(cache):
    server = _Server(b"")

    def not_found(handler):
        handler.send_error(404)
    server.httpd.RequestHandlerClass.do_GET = not_found
    try:
        with pytest.raises(tf.errors.NotFoundError, match="404"):
            hub.resolve(server.url)
    finally:
        server.close()


def test_broken_cached_module_is_reported_not_deleted(cache, server):
    target = hub.resolve(server.url)
    os.remove(os.path.join(target, "saved_model.pb"))
    before = tree_state(cache)
    with pytest.raises(tf.errors.DataLossError, match="remove that directory"):
        hub.resolve(server.url)
    assert tree_state(cache) == before


def test_a_server_dripping_bytes_hits_the_deadline(cache, monkeypatch):
    monkeypatch.setattr(hub_resolver, "DOWNLOAD_DEADLINE_S", 0.05)
    monkeypatch.setattr(hub_resolver, "_CHUNK", 4096)
    body = _tarball(_model_members() + [_member("assets/pad.bin", os.urandom(200_000))])
    server = _Server(body, chunk_delay=0.01)  # 4 KiB every 10 ms: about half a second
    try:
        with pytest.raises(tf.errors.DeadlineExceededError, match="DOWNLOAD_DEADLINE_S"):
            hub.resolve(server.url)
    finally:
        server.close()
    assert os.listdir(cache) == []


def test_something_else_at_the_module_path_is_a_clear_error(cache, server):
    (cache / hub_resolver.hashlib.sha1(server.url.encode()).hexdigest()).write_text("x")
    with pytest.raises(tf.errors.FailedPreconditionError, match="something else is there"):
        hub.resolve(server.url)
    assert sorted(os.listdir(cache)) == [hub_resolver.hashlib.sha1(
        server.url.encode()).hexdigest()]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_mutated_archives_are_unpacked_or_refused_cleanly(tmp_path_factory, data):
    """Any corruption of a good archive (bytes flipped, cut) unpacks, or fails with
    DataLossError / ResourceExhaustedError, never a raw error; nothing lands outside."""
    base = tmp_path_factory.mktemp("fuzz")
    good = bytearray(_GOOD_GZ if data.draw(st.booleans()) else _GOOD_TAR)
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(good) - 1))
        good[i] = data.draw(st.integers(0, 255))
    body = bytes(good[:data.draw(st.integers(1, len(good)))])
    out = base / "module"
    out.mkdir()
    size_limits.set_decompression_cap(1 << 20)
    try:
        archive.extract(io.BytesIO(body), str(out), "fuzz.tar.gz")
    except (tf.errors.DataLossError, tf.errors.ResourceExhaustedError):
        pass
    finally:
        size_limits.set_decompression_cap(None)
    assert sorted(os.listdir(base)) == ["module"]
    for dirpath, dirs, files in os.walk(out):
        for name in dirs + files:
            assert not os.path.islink(os.path.join(dirpath, name))
