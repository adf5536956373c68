"""The model server cannot be stalled (issue 29, item 4), over real sockets on 127.0.0.1:
large bodies are decoded off the event loop while other clients are answered, half-sent
requests are closed after their timeouts, bodies over the limit are refused with 413
before they are read, a whole request is bounded by --rest_api_timeout_in_ms, the
connection limit answers 503, errors echo at most a short prefix of what the client sent,
and a version directory that is not a number is logged and skipped while later versions
still load. No test asserts a wall-clock time: only order of completion and outcomes."""
import json
import logging
import os
import shutil
import socket
import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tensorlite.framework import dtypes  # noqa: E402
from tensorlite.serving import json_codec, rest_app  # noqa: E402
from tensorlite.serving.config import ModelSpec  # noqa: E402
from tensorlite.serving.limits import RestLimits, uvicorn_config  # noqa: E402
from tensorlite.serving.servable import Servable, Signature, load_servable  # noqa: E402
from tensorlite.serving.server import ModelServer  # noqa: E402
from tests.security.conftest import tree_state  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "serving")
MB = 1 << 20
SMALL = b'{"instances": [[1.0, 2.0]]}'
PROTOCOLS = ["h11", "httptools"]  # uvicorn's two HTTP parsers, each under the guard


def _double(x):
    return {"y": np.asarray(x) * 2}


def _servable(fn=_double):
    """A model of one signature, y = 2x over [None, 2] float32, without a SavedModel."""
    spec = {"x": (dtypes.float32, (None, 2))}
    return Servable({"serving_default": Signature(fn, spec, {"y": (dtypes.float32,
                                                                   (None, 2))})})


class _Served:
    """A ModelServer and its REST app under `limits`, on a uvicorn thread on 127.0.0.1."""

    def __init__(self, base, limits, loader=None, http="auto"):
        import uvicorn
        self.server = ModelServer([ModelSpec("m", str(base))],
                                  loader or (lambda path: _servable()), poll_seconds=0.1)
        self.server.start()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.uv = uvicorn.Server(uvicorn_config(rest_app.build_app(self.server, limits=limits),
                                                limits, "127.0.0.1", self.port, http,
                                                log_level="error"))
        self.thread = threading.Thread(target=self.uv.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.uv.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)

    def close(self):
        self.uv.should_exit = True
        self.thread.join(timeout=30)
        self.server.stop()

    def connect(self, timeout=30):
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def request(self, method, path, body=b"", headers=(), timeout=30):
        """(status, headers text, body) of one request on a new connection."""
        with self.connect(timeout) as s:
            head = [f"{method} {path} HTTP/1.1", "Host: t", f"Content-Length: {len(body)}",
                    *headers, "", ""]
            s.sendall("\r\n".join(head).encode() + body)
            return _read_response(s)


def _read_response(s):
    """(status, headers text, body) of one HTTP/1.1 response with a Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, f"the connection closed before a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(v) for k, _, v in (ln.partition(":") for ln in lines[1:])
                  if k.strip().lower() == "content-length")
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, "the connection closed mid-response"
        body += chunk
    return int(lines[0].split()[1]), "\r\n".join(lines[1:]).lower(), body


def _closed_by_peer(s):
    """Everything the server sends until it closes the connection (a reset counts)."""
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk
    except ConnectionResetError:
        return data


@pytest.fixture
def base(tmp_path):
    """A model base path with version 1 (an empty directory: the test loaders build the
    servable in memory)."""
    (tmp_path / "m" / "1").mkdir(parents=True)
    return tmp_path / "m"


@pytest.fixture
def served(base, request):
    limits = getattr(request, "param", None) or RestLimits(max_body_bytes=MB)
    running = _Served(base, limits)
    yield running
    running.close()


class _Trickler:
    """`n` connections that send the start of a request and then one header byte each per
    `every` seconds, until the server sends something or closes (at most `rounds`)."""

    def __init__(self, port, n, every=0.2, rounds=300):
        self.socks = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(b"GET /v1/models/m HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            self.socks.append(s)
        self._stop, self._every, self._rounds = threading.Event(), every, rounds
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        import select
        live = list(self.socks)
        for _ in range(self._rounds):
            if not live or self._stop.wait(self._every):
                return
            readable, _, _ = select.select(live, [], [], 0)
            for s in live:
                if s in readable:
                    continue
                try:
                    s.send(b"a")
                except OSError:
                    readable.append(s)
            live = [s for s in live if s not in readable]

    def close(self):
        self._stop.set()
        self._thread.join(timeout=30)
        for s in self.socks:
            s.close()


def _large_predict(nbytes):
    """A :predict body of about `nbytes`: two instances padded with JSON whitespace (cheap
    to build and to parse on two cores; the server still receives and decodes it all)."""
    head = b'{"instances": [[1.0, 2.0], [3.0, 4.0]]'
    return head + b" " * (nbytes - len(head) - 1) + b"}"


def _gate_large_decoding(monkeypatch, events, seen):
    """Holds the decoding of any body over 1 MB until events["answered"] (at most 30 s),
    and notes the threads that decode it and encode its two-row reply. Were decoding on
    the event loop, the wait would stall every other request and the gate time out."""
    real_loads, real_encode = json_codec.loads, rest_app._encode_predict

    def gated_loads(body):
        if len(body) > MB:
            seen["decode_thread"] = threading.get_ident()
            events["decoding"].set()
            seen["gate_opened"] = events["answered"].wait(30)
        return real_loads(body)

    def spied_encode(outputs, row_format):
        if len(next(iter(outputs.values()))) == 2:
            seen["encode_thread"] = threading.get_ident()
        return real_encode(outputs, row_format)

    monkeypatch.setattr(json_codec, "loads", gated_loads)
    monkeypatch.setattr(rest_app, "_encode_predict", spied_encode)


@pytest.mark.parametrize("http", PROTOCOLS)
def test_large_body_and_trickling_clients_do_not_stall_the_rest(base, monkeypatch, http):
    limits = RestLimits(max_body_bytes=64 * MB, header_timeout_s=1.5, body_timeout_s=120,
                        request_timeout_ms=120_000)
    events = {k: threading.Event() for k in ("partial", "phase1", "decoding", "answered")}
    seen, order, lock = {}, [], threading.Lock()
    _gate_large_decoding(monkeypatch, events, seen)
    running = _Served(base, limits, http=http)
    trickle = _Trickler(running.port, 200)
    try:
        body = _large_predict(50 * MB)

        def large():
            with running.connect(timeout=120) as s:
                s.sendall(b"POST /v1/models/m:predict HTTP/1.1\r\nHost: t\r\n"
                          b"Content-Length: %d\r\n\r\n" % len(body) + body[:8 * MB])
                events["partial"].set()
                events["phase1"].wait(30)
                s.sendall(body[8 * MB:])
                seen["large"] = _read_response(s)
            with lock:
                order.append("large")

        def done(name, reply):
            seen[name] = reply
            with lock:
                order.append(name)

        t = threading.Thread(target=large, daemon=True)
        t.start()
        assert events["partial"].wait(30)
        done("status while the body arrives", running.request("GET", "/v1/models/m"))
        events["phase1"].set()
        assert events["decoding"].wait(60), "the large body never reached decoding"
        done("status while it decodes", running.request("GET", "/v1/models/m"))
        done("small predict", running.request("POST", "/v1/models/m:predict", SMALL))
        events["answered"].set()
        t.join(timeout=120)
        assert order == ["status while the body arrives", "status while it decodes",
                         "small predict", "large"]
        assert seen["gate_opened"], "the large body's decoding blocked the event loop"
        for name in order[:-1]:
            assert seen[name][0] == 200, seen[name]
        assert json.loads(seen["small predict"][2]) == {"predictions": [[2.0, 4.0]]}
        assert seen["large"][0] == 200
        assert json.loads(seen["large"][2]) == {"predictions": [[2.0, 4.0], [6.0, 8.0]]}
        assert seen["decode_thread"] != running.thread.ident
        assert seen["encode_thread"] != running.thread.ident
        # every trickling connection is closed by the header timeout, with a 408 unless a
        # trickled byte crossed the close (then the peer resets it)
        replies = [_closed_by_peer(s) for s in trickle.socks]
        answered = [r for r in replies if r]
        assert all(r.startswith(b"HTTP/1.1 408 ") for r in answered)
        assert all(b"--rest_api_header_timeout_seconds" in r for r in answered)
        assert len(answered) >= len(replies) // 2
    finally:
        trickle.close()
        running.close()


JUNK_VERSIONS = ("²", "١٢", "abc", "-1", "1.5", " 3", "99999999999999999999")


def test_junk_version_names_are_logged_and_skipped_while_new_versions_load(tmp_path, caplog):
    base = tmp_path / "mlp"
    shutil.copytree(os.path.join(FIXTURES, "mlp", "1"), base / "1")
    for name in JUNK_VERSIONS:
        (base / name).mkdir()
    (base / "7").write_text("a file, not a version directory")
    caplog.set_level(logging.WARNING, logger="tensorlite.serving")
    server = ModelServer([ModelSpec("mlp", str(base))], load_servable, poll_seconds=0.05)
    server.start()
    try:
        assert server.models["mlp"].available_versions() == [1]
        before = tree_state(tmp_path)
        shutil.copytree(os.path.join(FIXTURES, "mlp", "2"), base / "2")
        added = set(tree_state(tmp_path)) - set(before)
        deadline = time.monotonic() + 60
        while server.models["mlp"].available_versions() != [2]:
            assert time.monotonic() < deadline, "version 2 never loaded: the poll stopped"
            time.sleep(0.05)
        after = tree_state(tmp_path)
        assert set(after) == set(before) | added, "the server wrote or deleted files"
    finally:
        server.stop()
    logged = [r.getMessage() for r in caplog.records if r.name == "tensorlite.serving"]
    for name in JUNK_VERSIONS:
        assert sum(repr(name) in m for m in logged) == 1, (name, logged)  # once, not per poll


def test_the_poll_loop_outlives_an_error_in_one_poll(base, monkeypatch, caplog):
    from tensorlite.serving.manager import ServedModel
    real, failures = ServedModel.poll, []

    def flaky(self, wait=False):
        if not failures:
            failures.append(1)
            raise OSError("a file system hiccup")
        return real(self, wait)

    caplog.set_level(logging.ERROR, logger="tensorlite.serving")
    server = ModelServer([ModelSpec("m", str(base))], lambda path: _servable(),
                         poll_seconds=0.05)
    server.start()
    try:
        monkeypatch.setattr(ServedModel, "poll", flaky)
        (base / "2").mkdir()
        deadline = time.monotonic() + 30
        while server.models["m"].available_versions() != [2]:
            assert time.monotonic() < deadline, "the poll thread died"
            time.sleep(0.05)
    finally:
        server.stop()
    assert failures and any("a file system hiccup" in r.exc_text
                            for r in caplog.records if r.exc_text)


def _error(reply):
    """The message of TF Serving's error JSON in a (status, headers, body) reply."""
    doc = json.loads(reply[2])
    assert set(doc) == {"error"}, doc
    return doc["error"]


def test_content_length_over_the_limit_is_answered_413_without_reading_the_body(served):
    with served.connect() as s:  # no body is ever sent: the reply cannot wait for it
        s.sendall(b"POST /v1/models/m:predict HTTP/1.1\r\nHost: t\r\n"
                  b"Content-Length: %d\r\n\r\n" % (50 * MB))
        reply = _read_response(s)
        assert reply[0] == 413
        assert "52428800 bytes exceeds the limit of 1048576" in _error(reply)
        assert "--max_body_bytes" in _error(reply)
        assert "connection: close" in reply[1]
        assert _closed_by_peer(s) == b""
    assert served.request("POST", "/v1/models/m:predict", SMALL)[0] == 200


@pytest.mark.parametrize("http", PROTOCOLS)
def test_a_chunked_body_is_counted_as_it_arrives(base, http):
    running = _Served(base, RestLimits(max_body_bytes=MB, body_timeout_s=120), http=http)
    try:
        with running.connect() as s:
            s.sendall(b"POST /v1/models/m:predict HTTP/1.1\r\nHost: t\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n")
            piece = b"%x\r\n%s\r\n" % (64 << 10, b" " * (64 << 10))
            for _ in range(MB // (64 << 10) + 1):  # one chunk past the limit, no terminator
                s.sendall(piece)
            reply = _read_response(s)
        assert reply[0] == 413
        assert "exceeds the limit of 1048576 bytes" in _error(reply)
    finally:
        running.close()


def test_a_trickling_body_is_answered_408_after_the_body_timeout(base):
    import select
    running = _Served(base, RestLimits(max_body_bytes=MB, body_timeout_s=0.5))
    try:
        with running.connect() as s:
            s.sendall(b"POST /v1/models/m:predict HTTP/1.1\r\nHost: t\r\n"
                      b"Content-Length: 1000\r\n\r\n")
            for _ in range(300):  # a byte per 50 ms: never idle, never done
                if select.select([s], [], [], 0.05)[0]:
                    break
                s.send(b" ")
            reply = _read_response(s)
            assert reply[0] == 408
            assert "--rest_api_body_timeout_seconds" in _error(reply)
            assert _closed_by_peer(s) == b""
    finally:
        running.close()


@pytest.mark.parametrize("http", PROTOCOLS)
def test_half_sent_headers_are_answered_408_and_idle_connections_closed(base, http):
    running = _Served(base, RestLimits(header_timeout_s=0.5), http=http)
    try:
        with running.connect() as half, running.connect() as idle:
            half.sendall(b"GET /v1/models/m HTTP/1.1\r\nHost: t\r\nX-Slow: ab")
            reply = _read_response(half)
            assert reply[0] == 408
            assert "--rest_api_header_timeout_seconds" in _error(reply)
            assert _closed_by_peer(half) == b""
            assert _closed_by_peer(idle) == b""  # never sent a byte: closed, no reply
        with running.connect() as s:  # a keep-alive connection: the next request is bounded
            s.sendall(b"GET /v1/models/m HTTP/1.1\r\nHost: t\r\n\r\n")
            assert _read_response(s)[0] == 200
            s.sendall(b"GET /v1/models/m HTTP/1.1\r\n")
            assert _read_response(s)[0] == 408
    finally:
        running.close()


@pytest.mark.parametrize("http", PROTOCOLS)
def test_headers_over_the_limit_are_answered_431(base, http):
    running = _Served(base, RestLimits(max_header_bytes=4096), http=http)
    try:
        with running.connect() as s:
            s.sendall(b"GET /v1/models/m HTTP/1.1\r\nHost: t\r\n")
            for _ in range(8):
                s.sendall(b"X-Big: " + b"a" * 1000 + b"\r\n")
            reply = _read_response(s)
        assert reply[0] == 431 and "--rest_api_max_header_bytes" in _error(reply)
        # a body in the same packet as the headers does not count towards their limit
        body = _large_predict(64 << 10)
        assert running.request("POST", "/v1/models/m:predict", body)[0] == 200
    finally:
        running.close()


def test_a_request_past_rest_api_timeout_in_ms_gets_tf_servings_504(base):
    release = threading.Event()

    def slow(x):
        release.wait(30)
        return _double(x)

    running = _Served(base, RestLimits(request_timeout_ms=300),
                      loader=lambda path: _servable(slow))
    try:
        reply = running.request("POST", "/v1/models/m:predict", SMALL)
        assert reply[0] == 504
        assert "--rest_api_timeout_in_ms=300" in _error(reply)
        # the abandoned model call holds no one up
        assert running.request("GET", "/v1/models/m")[0] == 200
        metrics = running.request("GET", "/monitoring/prometheus/metrics")[2].decode()
        assert 'status="DeadlineExceededError"' in metrics
    finally:
        release.set()
        running.close()


def test_the_connection_limit_answers_503_until_connections_close(base):
    running = _Served(base, RestLimits(max_connections=4, header_timeout_s=60))
    held = [running.connect() for _ in range(3)]
    try:
        for s in held:  # uvicorn counts a connection once it is accepted
            s.sendall(b"GET /v1/models/m HTTP/1.1\r\nHost: t\r\n")
        deadline = time.monotonic() + 30
        while len(running.uv.server_state.connections) < 3:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert running.request("GET", "/v1/models/m")[0] == 503
        for s in held:
            s.close()
        deadline = time.monotonic() + 30
        while (status := running.request("GET", "/v1/models/m")[0]) == 503:
            assert time.monotonic() < deadline, "closed connections were still counted"
            time.sleep(0.05)
        assert status == 200
    finally:
        for s in held:
            s.close()
        running.close()


@pytest.mark.parametrize("served", [RestLimits(max_body_bytes=64 * MB)], indirect=True)
def test_errors_echo_at_most_a_prefix_of_what_the_client_sent(served):
    huge = "s" * (50 * MB)
    body = json.dumps({"signature_name": huge, "instances": [[1.0, 2.0]]}).encode()
    reply = served.request("POST", "/v1/models/m:predict", body)
    assert reply[0] == 400
    assert len(reply[2]) < 1000
    assert f"({50 * MB} characters)" in _error(reply)
    assert _error(reply).startswith('Serving signature name: "sss')
    for doc in ({"instances": [[1.0, 2.0]], "k" * MB: 1},                 # unknown key
                {"inputs": {"x": [[1.0, 2.0]], "n" * MB: [1]}},            # unknown input
                {"instances": [{"x": [1.0, 2.0], "i" * MB: 1}]}):          # unknown instance key
        reply = served.request("POST", "/v1/models/m:predict", json.dumps(doc).encode())
        assert reply[0] == 400 and len(reply[2]) < 1000, reply
        assert f"({MB} characters)" in _error(reply)
    reply = served.request("GET", "/v1/models/" + "p" * 8000 + "/x")
    assert reply[0] == 404 and len(reply[2]) < 1000


LIMIT_FLAGS = ("--max_body_bytes", "--rest_api_header_timeout_seconds",
               "--rest_api_max_header_bytes", "--rest_api_body_timeout_seconds",
               "--rest_api_timeout_in_ms", "--rest_api_max_connections",
               "--rest_api_keep_alive_seconds")


def test_every_limit_is_a_documented_flag_with_a_default(capsys):
    from tensorlite.serving.__main__ import parse_args
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    help_text = capsys.readouterr().out
    docs = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "serving.md"),
                encoding="utf-8").read()
    for flag in LIMIT_FLAGS:
        assert flag in help_text and flag in docs, flag
    assert "(default 30000)" in " ".join(help_text.split())
    args = parse_args(["--model_base_path=/m", "--rest_api_timeout_in_ms=1500",
                       "--max_body_bytes=2048", "--rest_api_header_timeout_seconds=2.5"])
    assert (args.limits.request_timeout_ms, args.limits.max_body_bytes,
            args.limits.header_timeout_s) == (1500, 2048, 2.5)
    assert parse_args(["--model_base_path=/m"]).limits == RestLimits()
    with pytest.raises(SystemExit):
        parse_args(["--model_base_path=/m", "--rest_api_body_timeout_seconds=0"])
    assert "--rest_api_body_timeout_seconds must be positive" in capsys.readouterr().err
