"""What one REST client may cost the model server, and the uvicorn settings that bound it.

Each limit is a `tensorlite-serving` flag (docs/serving.md lists them with defaults):

    max_body_bytes        --max_body_bytes                     a request body; 413 beyond it
    header_timeout_s      --rest_api_header_timeout_seconds    request line + headers; 408
    max_header_bytes      --rest_api_max_header_bytes          request line + headers; 431
    body_timeout_s        --rest_api_body_timeout_seconds      the body, from the headers; 408
    request_timeout_ms    --rest_api_timeout_in_ms             headers to response; 504
    max_connections       --rest_api_max_connections           open connections + requests
                                                               in flight; 503 beyond it
    keep_alive_s          --rest_api_keep_alive_seconds        idle time between requests

Example:
    >>> limits = RestLimits(max_body_bytes=1 << 20, request_timeout_ms=5000)
    >>> config = uvicorn_config(build_app(server, limits=limits), limits, "127.0.0.1", 8501)
"""
from dataclasses import dataclass

# Bodies and replies larger than this are decoded and encoded on a worker thread, so the
# event loop keeps answering other clients; smaller ones stay inline (a thread hop costs
# more than parsing a few KiB).
OFFLOAD_BYTES = 64 << 10


@dataclass(frozen=True)
class RestLimits:
    """Bounds on one REST client; see the module docstring for what each one bounds."""
    max_body_bytes: int = 64 << 20
    header_timeout_s: float = 10.0
    max_header_bytes: int = 64 << 10
    body_timeout_s: float = 30.0
    request_timeout_ms: int = 30000
    max_connections: int = 1000
    keep_alive_s: float = 5.0

    def __post_init__(self):
        for name in ("max_body_bytes", "header_timeout_s", "max_header_bytes",
                     "body_timeout_s", "request_timeout_ms", "max_connections",
                     "keep_alive_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"RestLimits.{name} must be positive, got "
                                 f"{getattr(self, name)!r}")


def uvicorn_config(app, limits, host="127.0.0.1", port=8501, http="auto", **kwargs):
    """A uvicorn.Config serving `app` under `limits`: uvicorn bounds idle keep-alive
    connections and concurrency, `http_guard` the request line and headers, the app
    itself the body and the whole request."""
    import uvicorn  # noqa: PLC0415 - the serving extra
    from tensorlite.serving.http_guard import guarded_protocol  # noqa: PLC0415
    protocol = guarded_protocol(http, limits.header_timeout_s, limits.max_header_bytes)
    return uvicorn.Config(app, host=host, port=port, http=protocol, ws="none",
                          timeout_keep_alive=limits.keep_alive_s,
                          limit_concurrency=limits.max_connections,
                          # a backstop only: the guard counts whole reads (at most 256 KiB
                          # each) and answers 431 before h11 would answer a bare 400
                          h11_max_incomplete_event_size=limits.max_header_bytes + (320 << 10),
                          proxy_headers=False,  # X-Forwarded-* are not TF Serving's
                          **kwargs)
