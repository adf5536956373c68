"""Who may talk to a tf.data service (and a parameter-server cluster on it): the peers that
hold the cluster's TLS credentials. Dask's own security carries them
(`distributed.security.Security`: mutual TLS, every peer presents a certificate signed by
the cluster's CA and checks the other's), so a client without them is refused in the TLS
handshake, before any payload of it is read.

Credentials come from, in this order: the `security=` argument (a `Security`, or the path
of a credentials file), the dispatcher this process started at that address, the file named
by $TENSORLITE_DATA_SERVICE_CREDENTIALS, or Dask's own TLS configuration
(`distributed.comm.tls.*`). A credentials file is one PEM file holding the private key, the
certificate and the CA's certificate(s); it must be readable by its owner only (0600), as
ssh insists for its keys. The same file works for Dask's command line:
`dask scheduler --tls-ca-file F --tls-cert F --tls-key F`.

Example:
    >>> security = generate()
    >>> path = write(security, "/tmp/tl-demo/cluster.pem")    # 0600, refuses to overwrite
    >>> load(path).require_encryption
    True
"""
import os
import re
import stat

from tensorlite.framework import errors

ENV_VAR = "TENSORLITE_DATA_SERVICE_CREDENTIALS"
_KNOWN = {}      # "host:port" of a dispatcher started in this process -> its Security
_PEM = re.compile(r"-----BEGIN ([A-Z ]+)-----\r?\n.*?-----END \1-----\r?\n?", re.S)
_ROLES = ("client", "scheduler", "worker")


def _security_class():
    try:
        from distributed.security import Security  # noqa: PLC0415
    except ImportError:
        raise errors.UnavailableError(
            None, None, "the tf.data service runs on Dask: pip install distributed "
            "cloudpickle cryptography (or pip install '.[distributed]'"
            " in a clone of tensorlite)") from None
    return Security


def generate():
    """New credentials for one cluster: a self-signed certificate that is its own CA, held
    in memory (Dask's `Security.temporary`; needs the `cryptography` package)."""
    try:
        return _security_class().temporary()
    except ImportError as e:
        raise errors.UnavailableError(
            None, None, f"tf.data service: generating the cluster's TLS credentials needs "
            f"the `cryptography` package ({e}): pip install cryptography") from None


def from_pem(key, cert, ca):
    """A `Security` in which every role (client, scheduler, worker) presents `cert` with
    `key` and trusts the certificates in `ca` (PEM text); encryption required."""
    fields = {"tls_ca_file": ca}
    for role in _ROLES:
        fields[f"tls_{role}_key"], fields[f"tls_{role}_cert"] = key, cert
    return _security_class()(require_encryption=True, **fields)


def _pem_text(value):
    """A Security field as PEM text: Dask holds either the text or a file's path."""
    if value is None or "-----BEGIN" in value:
        return value
    with open(value, encoding="ascii") as f:
        return f.read()


def write(security, path):
    """Writes `security`'s client key, certificate and CA as one PEM file readable by its
    owner only (0600; its directory is created 0700 if missing). Refuses to overwrite an
    existing file (AlreadyExistsError). Returns the path."""
    key, cert = _pem_text(security.tls_client_key), _pem_text(security.tls_client_cert)
    ca = _pem_text(security.tls_ca_file)
    if not (key and cert and ca):
        raise errors.InvalidArgumentError(
            None, None, "tf.data service: these credentials have no client key, certificate "
            "and CA to write")
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
    except FileExistsError:
        raise errors.AlreadyExistsError(
            None, None, f"tf.data service: {path} already exists; credentials are never "
            f"overwritten (remove it or choose another path)") from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write("".join(s if s.endswith("\n") else s + "\n" for s in (key, cert, ca)))
    return path


def load(path):
    """The `Security` of a credentials file (see `write`). PermissionDeniedError if others
    may read it, InvalidArgumentError naming what is missing if it is not one."""
    path = os.fspath(path)
    try:
        with open(path, encoding="ascii") as f:
            st = os.fstat(f.fileno())        # the file read, not whatever the path names now
            text = f.read(1 << 20)
    except FileNotFoundError:
        raise errors.NotFoundError(
            None, None, f"tf.data service: no credentials file at {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise errors.InvalidArgumentError(
            None, None, f"tf.data service: cannot read credentials file {path}: {e}") from None
    if st.st_mode & 0o077 or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
        raise errors.PermissionDeniedError(
            None, None, f"tf.data service: credentials file {path} holds a private key but "
            f"has mode {stat.filemode(st.st_mode)} and owner uid {st.st_uid}; it must be "
            f"yours and readable by you only: chmod 600 {path}")
    blocks = [(m.group(1), m.group(0)) for m in _PEM.finditer(text)]
    keys = [b for kind, b in blocks if kind.endswith("PRIVATE KEY")]
    certs = [b for kind, b in blocks if kind == "CERTIFICATE"]
    if len(keys) != 1 or not certs:
        raise errors.InvalidArgumentError(
            None, None, f"tf.data service: {path} is not a credentials file: it needs one "
            f"PEM private key and at least one certificate (found {len(keys)} key(s), "
            f"{len(certs)} certificate(s)); write one with `python -m tensorlite.data."
            f"service --write-credentials PATH`")
    # the first certificate is this node's; the rest are the CA (a self-signed one is its own)
    return from_pem(keys[0], certs[0], "".join(certs[1:] or certs))


def remember(address, security):
    """Records the credentials of a dispatcher this process started at `address`."""
    _KNOWN[_host_port(address)] = security


def forget(address):
    _KNOWN.pop(_host_port(address), None)


def _host_port(address):
    return address.split("://", 1)[-1]


def resolve(security=None, address=None):
    """The credentials to use for `address` (see the module's docstring), or None when
    none are given anywhere (a plain-TCP cluster the user started without TLS)."""
    if security is not None:
        if isinstance(security, (str, os.PathLike)):
            return load(security)
        if not hasattr(security, "get_connection_args"):
            raise errors.InvalidArgumentError(
                None, None, f"tf.data service: security= must be a distributed.security."
                f"Security or the path of a credentials file, got {type(security).__name__}")
        return security
    if address is not None and _host_port(address) in _KNOWN:
        return _KNOWN[_host_port(address)]
    if os.environ.get(ENV_VAR):
        return load(os.environ[ENV_VAR])
    configured = _security_class()()
    if configured.tls_ca_file and configured.tls_client_cert:
        return configured
    return None
