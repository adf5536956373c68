"""The tf.data service and the parameter-server strategy admit only peers holding the
cluster's credentials (issue 29 item 3): a dispatcher on 127.0.0.1 with one worker process,
both mutual TLS. Clients without the credentials (plain TCP, another CA, a certificate the
cluster's CA did not sign) are refused in the handshake and their payloads, which would
create the canary file, never run; a credentialed client works; the credentials file is
private and checked; the private key is on no command line."""
import os
import socket
import sys
import urllib.error
import urllib.request

import pytest

import tensorlite as tf
from tests.security.conftest import tree_state

pytest.importorskip("distributed")
pytest.importorskip("cryptography")
service = tf.data.experimental.service


@pytest.fixture(scope="module")
def cluster():
    dispatcher = service.DispatchServer()
    worker = service.WorkerServer(service.WorkerConfig(dispatcher_address=dispatcher.target))
    try:
        yield dispatcher, worker
    finally:
        worker.stop()
        dispatcher.stop()


def _plain_tcp(dispatcher):
    return "tcp://" + dispatcher.target.split("://", 1)[1]


def _foreign_credentials():
    from distributed.security import Security
    return Security.temporary()


def _unsigned_but_trusting(dispatcher):
    """A client that trusts the cluster's CA (its certificate is public) but presents a
    certificate of its own: only the dispatcher's check of the client can refuse it."""
    from tensorlite.data.service import credentials
    other = _foreign_credentials()
    return credentials.from_pem(other.tls_client_key, other.tls_client_cert,
                                dispatcher.security.tls_ca_file)


def _write_canary(path):
    with open(path, "w") as f:
        f.write("the payload ran")
    return os.getpid()


def _attempt_payloads(address, canary, **client_kwargs):
    """Connects with Dask's own client and, if let in, sends payloads that would create
    the canary on the dispatcher and on a worker."""
    from distributed import Client
    client = Client(address, timeout=5, set_as_default=False, **client_kwargs)
    try:
        client.run_on_scheduler(_write_canary, str(canary))
        client.submit(_write_canary, str(canary), pure=False).result(timeout=30)
    finally:
        client.close()


def test_dask_client_without_the_credentials_is_refused(cluster, canary):
    dispatcher, _ = cluster
    # plain TCP against the TLS listener: the handshake fails, nothing is read as a message
    with pytest.raises((OSError, TimeoutError)):
        _attempt_payloads(_plain_tcp(dispatcher), canary)
    # another cluster's credentials: the client refuses the dispatcher's certificate
    with pytest.raises((OSError, TimeoutError)):
        _attempt_payloads(dispatcher.target, canary, security=_foreign_credentials())
    # the cluster's CA but a certificate it did not sign: the dispatcher refuses the client
    with pytest.raises((OSError, TimeoutError)):
        _attempt_payloads(dispatcher.target, canary,
                          security=_unsigned_but_trusting(dispatcher))
    assert not canary.exists()


def _rogue_pipeline(path):
    """A pipeline whose first element, produced where it runs, creates `path`."""
    path = str(path)

    def gen():
        yield _write_canary(path)
    return tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64))


def test_the_rogue_pipeline_runs_on_a_worker_when_admitted(cluster, tmp_path):
    # the control for the test below: admitted, this pipeline does create its file, in
    # the worker process
    dispatcher, _ = cluster
    ran = tmp_path / "ran"
    pids = [int(x) for x in _rogue_pipeline(ran).distribute(dispatcher.target)]
    assert ran.exists() and pids and os.getpid() not in pids


def test_register_dataset_without_the_credentials_never_runs_the_pipeline(
        cluster, canary, monkeypatch):
    from tensorlite.data.service import connection, credentials
    dispatcher, _ = cluster
    monkeypatch.setattr(connection, "CONNECT_TIMEOUT_S", 5.0)
    # as from another process: this process's record of the dispatcher's credentials hidden
    monkeypatch.setattr(credentials, "_KNOWN", {})
    monkeypatch.delenv(credentials.ENV_VAR, raising=False)
    rogue = _rogue_pipeline(canary)

    def run(address, security=None):      # register, then iterate: the payload would run
        return list(rogue.apply(service.distribute("distributed_epoch", address,
                                                   security=security)))
    with pytest.raises(tf.errors.UnauthenticatedError, match="none were found"):
        run(dispatcher.target)
    with pytest.raises(tf.errors.UnavailableError, match="unreachable"):
        run(_plain_tcp(dispatcher))
    with pytest.raises(tf.errors.UnauthenticatedError, match="TLS handshake"):
        run(dispatcher.target, _foreign_credentials())
    # refused after the handshake (TLS 1.3): reported as a failed handshake, or as an
    # unreachable dispatcher if the close arrives as a timeout
    with pytest.raises((tf.errors.UnauthenticatedError, tf.errors.UnavailableError)):
        run(dispatcher.target, _unsigned_but_trusting(dispatcher))
    with pytest.raises(tf.errors.UnauthenticatedError):
        service.register_dataset(dispatcher.target, rogue, security=_foreign_credentials())
    assert not canary.exists()


def test_parameter_server_without_the_credentials_is_refused(cluster, canary, monkeypatch):
    from tensorlite.data.service import connection
    dispatcher, _ = cluster
    monkeypatch.setattr(connection, "CONNECT_TIMEOUT_S", 5.0)
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        {}, master=dispatcher.target, rpc_layer="dask")
    strategy = tf.distribute.experimental.ParameterServerStrategy(
        resolver, security=_foreign_credentials())
    with pytest.raises(tf.errors.UnauthenticatedError):
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        coordinator.schedule(_write_canary, args=(str(canary),))
        coordinator.join()
    assert not canary.exists()


def test_worker_without_the_credentials_cannot_join(cluster, monkeypatch):
    # a rogue worker would be sent the pipelines and their elements
    from tensorlite.data.service import credentials
    dispatcher, worker = cluster
    monkeypatch.delenv(credentials.ENV_VAR, raising=False)
    for security in (_foreign_credentials(), _unsigned_but_trusting(dispatcher)):
        with pytest.raises(tf.errors.UnauthenticatedError, match="refused"):
            service.WorkerServer(service.WorkerConfig(
                dispatcher_address=dispatcher.target, security=security,
                dispatcher_timeout_ms=10000))
    with pytest.raises(tf.errors.UnauthenticatedError, match="none were found"):
        service.WorkerServer(service.WorkerConfig(
            dispatcher_address="tls://127.0.0.1:1", dispatcher_timeout_ms=10000))
    assert list(dispatcher._cluster.scheduler.workers) == [worker.worker_address]


def test_silent_and_garbage_connections_do_not_stall_credentialed_clients(cluster):
    from distributed import Client
    dispatcher, _ = cluster
    host, port = dispatcher.target.split("://", 1)[1].rsplit(":", 1)
    silent = socket.create_connection((host, int(port)))        # never says anything
    garbage = socket.create_connection((host, int(port)))
    garbage.sendall(b"GET / HTTP/1.1\r\n\r\n" + os.urandom(4096))
    try:
        client = Client(dispatcher.target, timeout=30, set_as_default=False,
                        security=dispatcher.security)
        try:
            assert client.submit(sum, [1, 2, 3], pure=False).result(timeout=60) == 6
        finally:
            client.close()
    finally:
        silent.close()
        garbage.close()


def test_credentialed_clients_work(cluster, tmp_path, monkeypatch):
    from tensorlite.data.service import connection, credentials
    dispatcher, _ = cluster
    ds = tf.data.Dataset.range(6).map(lambda x: x * 2)
    # in this process: found by the dispatcher's address
    assert sorted(int(x) for x in ds.distribute(dispatcher.target)) == [0, 2, 4, 6, 8, 10]
    # as another process would: the credentials file, given or named by the environment
    path = credentials.write(dispatcher.security, tmp_path / "cluster.pem")
    again = ds.apply(service.distribute("distributed_epoch", dispatcher.target,
                                        security=str(path)))
    assert sorted(int(x) for x in again) == [0, 2, 4, 6, 8, 10]
    monkeypatch.setenv(credentials.ENV_VAR, str(path))
    monkeypatch.setattr(credentials, "_KNOWN", {})
    ds_id = service.register_dataset(dispatcher.target, ds)
    back = service.from_dataset_id("parallel_epochs", dispatcher.target, ds_id)
    assert sorted(int(x) for x in back) == [0, 2, 4, 6, 8, 10]     # one worker: one epoch
    # the file is read on every call, but one client per address and credentials is kept
    assert connection.connect(dispatcher.target) is connection.connect(dispatcher.target)


def test_loopback_only_and_no_key_on_command_lines(cluster):
    from tensorlite.data.service.connection import connect
    dispatcher, worker = cluster
    assert dispatcher.target.startswith("tls://127.0.0.1:")
    assert worker.worker_address.startswith("tls://127.0.0.1:")
    http = dispatcher._cluster.scheduler.http_server     # Dask's own, outside TLS
    assert {s.getsockname()[0] for s in http._sockets.values()} == {"127.0.0.1"}
    base = f"http://127.0.0.1:{http.port}"
    with urllib.request.urlopen(base + "/health", timeout=10) as reply:
        assert reply.status == 200
    for route in ("/json/identity.json", "/info/main/workers.html", "/metrics"):
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(base + route, timeout=10)      # cluster state: not served
    pid = connect(dispatcher.target).run(os.getpid)[worker.worker_address]
    assert pid != os.getpid()
    if not os.path.exists(f"/proc/{pid}/cmdline"):
        pytest.skip("no /proc to read the worker's command line from")
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        cmdline = f.read()
    with open(f"/proc/{pid}/environ", "rb") as f:
        environ = f.read()
    key_line = dispatcher.security.tls_client_key.splitlines()[1].encode()
    for seen in (cmdline, environ):
        assert b"PRIVATE KEY" not in seen and key_line not in seen


def test_credentials_file_is_private_and_checked(tmp_path):
    from tensorlite.data.service import credentials
    from tensorlite.data.service.__main__ import main
    path = tmp_path / "creds" / "cluster.pem"
    assert main(["--write-credentials", str(path)]) == 0
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(path.parent).st_mode & 0o777 == 0o700
    assert credentials.load(path).require_encryption
    before = tree_state(tmp_path)
    with pytest.raises(tf.errors.AlreadyExistsError, match="never overwritten"):
        main(["--write-credentials", str(path)])
    assert tree_state(tmp_path) == before
    os.chmod(path, 0o644)
    with pytest.raises(tf.errors.PermissionDeniedError, match="chmod 600"):
        credentials.load(path)
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    os.chmod(bogus, 0o600)
    with pytest.raises(tf.errors.InvalidArgumentError, match="0 key"):
        credentials.load(bogus)
    with pytest.raises(tf.errors.NotFoundError):
        credentials.load(tmp_path / "missing.pem")
    with pytest.raises(tf.errors.InvalidArgumentError, match="security="):
        credentials.resolve(security=42)


def test_protocol_and_credentials_must_agree(monkeypatch):
    from tensorlite.data.service import connection, credentials
    monkeypatch.setattr(credentials, "_KNOWN", {})
    monkeypatch.delenv(credentials.ENV_VAR, raising=False)
    with pytest.raises(tf.errors.UnauthenticatedError, match="none were found"):
        connection.connect("tls://127.0.0.1:1")
    with pytest.raises(tf.errors.InvalidArgumentError, match="use the dispatcher's tls://"):
        connection.connect("tcp://127.0.0.1:1", security=credentials.generate())
    assert connection.normalize_address("127.0.0.1:5", secure=True) == "tls://127.0.0.1:5"
    assert connection.normalize_address("grpc://h:5") == "tcp://h:5"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_command_line_service_credentials_are_private_and_removed(tmp_path, monkeypatch):
    import tempfile
    from tensorlite.data.service import __main__ as cli
    seen = {}

    def fake_serve(args, security, path):
        seen["mode"] = os.stat(path).st_mode & 0o777
        seen["dir"] = os.stat(os.path.dirname(path)).st_mode & 0o777
        seen["path"] = path
        return 0
    monkeypatch.setattr(cli, "_serve", fake_serve)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = tree_state(tmp_path)
    assert cli.main(["--workers", "0"]) == 0
    assert seen["mode"] == 0o600 and seen["dir"] == 0o700
    assert seen["path"].startswith(str(tmp_path))
    assert tree_state(tmp_path) == before      # it removed what it made, and only that


def test_dispatcher_calls_are_named_and_unknown_jobs_are_not_found():
    from tensorlite.data.service import dispatcher
    with pytest.raises(tf.errors.InvalidArgumentError, match="no call '_expire'"):
        dispatcher._on_scheduler("_expire", {}, dask_scheduler=None)
    state = dispatcher.DispatcherState()
    for method, kwargs in [("lease", dict(consumer="c", n=1)), ("job_info", {}),
                           ("commit", dict(consumer="c", split=0)),
                           ("renew", dict(consumer="c"))]:
        with pytest.raises(tf.errors.NotFoundError, match="no job 99"):
            getattr(state, method)(job_id=99, **kwargs)
    assert state.release(job_id=99, consumer="c") == 0
