"""Connecting to a tf.data service dispatcher: its address in Dask's form, and one
authenticated Dask client per address and credentials in a process (credentials.py says
where the credentials come from).

Example:
    >>> normalize_address("127.0.0.1:8786", secure=True)
    'tls://127.0.0.1:8786'
    >>> client = connect(dispatcher.target)      # a DispatchServer of this process
"""
from tensorlite.data.service import credentials
from tensorlite.framework import errors

CONNECT_TIMEOUT_S = 10.0
_CLIENTS = {}


def normalize_address(service, secure=False):
    """A Dask address from a service address: 'grpc://h:p', 'tls://h:p', 'tcp://h:p' or
    'h:p' (the last two tls:// when `secure`, i.e. credentials are at hand)."""
    if isinstance(service, tuple):  # TF's (protocol, address)
        service = service[1]
    if not isinstance(service, str) or not service.strip():
        raise errors.InvalidArgumentError(
            None, None, f"tf.data service: `service` must be the dispatcher's address such as "
            f"'tls://127.0.0.1:8786', got {service!r}")
    address = service.strip()
    for prefix in ("grpc://", "grpc+loas://"):
        if address.startswith(prefix):
            address = address[len(prefix):]
    address = address if "://" in address else ("tls://" if secure else "tcp://") + address
    host_port = address.split("://", 1)[1]
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit() or any(c in host for c in "<>/ "):
        raise errors.InvalidArgumentError(
            None, None, f"tf.data service: {service!r} is not a dispatcher's address; give "
            f"'host:port' such as 'tls://127.0.0.1:8786' (`python -m tensorlite.data.service` "
            f"prints one)")
    return address


def connect(service, security=None):
    """A Dask client of the dispatcher (one per address and credentials in a process),
    authenticated with `security` (see credentials.resolve)."""
    security = credentials.resolve(security, connection_address(service))
    address = normalize_address(service, security is not None)
    check_protocol(service, address, security)
    key = (address, _identity(security))
    client = _CLIENTS.get(key)
    if client is not None and client.status == "running":
        return client
    try:
        from distributed import Client  # noqa: PLC0415
    except ImportError:
        raise errors.UnavailableError(
            None, None, "the tf.data service runs on Dask: pip install distributed "
            "cloudpickle (or pip install '.[distributed]' in a clone of tensorlite)") from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, direct_to_workers=True,
                        set_as_default=False, security=security)
    except (OSError, TimeoutError) as e:
        raise _connect_error(service, address, security, e) from None
    _CLIENTS[key] = client
    return client


def _identity(security):
    """What a client's credentials are (not which object holds them: a credentials file is
    loaded afresh on every call, and each call must not open a new client)."""
    if security is None:
        return None
    return tuple(getattr(security, f, None) for f in
                 ("tls_ca_file", "tls_client_cert", "tls_client_key", "require_encryption"))


def connection_address(service):
    """The address part of a service argument (TF also accepts (protocol, address))."""
    return service[1] if isinstance(service, tuple) else service


def check_protocol(service, address, security):
    """Raises unless the address's protocol and the credentials agree (Dask's own errors
    for a mismatch are a TypeError and a RuntimeError that do not say what to do)."""
    if address.startswith("tls://") and security is None:
        raise errors.UnauthenticatedError(
            None, None, f"tf.data service: {service!r} speaks TLS and admits only clients "
            f"with its cluster's credentials, and none were found: pass security=<a Dask "
            f"Security or the credentials file `python -m tensorlite.data.service` prints> "
            f"or set ${credentials.ENV_VAR}")
    if address.startswith("tcp://") and getattr(security, "require_encryption", False):
        raise errors.InvalidArgumentError(
            None, None, f"tf.data service: {service!r} asks for plain TCP but the cluster's "
            f"credentials require TLS: use the dispatcher's tls:// address ("
            f"{'tls://' + address.split('://', 1)[1]!r})")


def _connect_error(service, address, security, e):
    """UnauthenticatedError when the TLS handshake failed, else UnavailableError, saying
    what to check: a TLS dispatcher refuses a client without its credentials in the
    handshake, which Dask reports as a failed or timed-out connection."""
    if security is not None and ("certificate" in str(e).lower() or "SSL" in str(e)):
        # TLS 1.3: a dispatcher refusing our certificate closes the connection right
        # after the handshake, which reaches us as an SSL EOF
        return errors.UnauthenticatedError(
            None, None, f"tf.data service: the TLS handshake with the dispatcher at "
            f"{service!r} failed or it closed the connection after it ({type(e).__name__}: "
            f"{e}): these credentials are not the cluster's (its CA did not sign ours, or "
            f"ours did not sign its)")
    if security is None:
        why = ("no credentials were given: a tensorlite dispatcher speaks TLS and refuses "
               "clients without its cluster's credentials; pass security=<Security or the "
               "credentials file `python -m tensorlite.data.service` prints> or set "
               f"${credentials.ENV_VAR}")
    else:
        why = ("if it is running, it refused these credentials (a certificate not signed "
               "by its CA) or speaks plain TCP")
    return errors.UnavailableError(
        None, None, f"tf.data service: the dispatcher at {service!r} ({address}) is "
        f"unreachable ({type(e).__name__}: {e}); {why}. Start one with `python -m "
        f"tensorlite.data.service --workers 2` (it prints its address and credentials) or "
        f"tf.data.experimental.service.DispatchServer(), and pass that address")
