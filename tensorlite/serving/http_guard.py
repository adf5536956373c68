"""uvicorn's HTTP protocols with a bound on the request line and headers.

uvicorn times out idle keep-alive connections but not a request that is still arriving: a
client that sends half a request line, or one header byte a second, holds its connection
(and its buffers) for ever. `guarded_protocol` wraps uvicorn's h11 or httptools protocol
class so that, from the moment a connection opens or its previous response is sent, the
request line and headers must arrive in full within `header_timeout_s` seconds and
`max_header_bytes` bytes; otherwise the connection is answered 408 or 431 (when any of the
request had arrived) and closed. The body is the ASGI app's to bound (`rest_app`: it reads
`receive()` under a deadline), since only the app knows when it wants the body.

Example:
    >>> cls = guarded_protocol("auto", header_timeout_s=10, max_header_bytes=65536)
    >>> uvicorn.Config(app, http=cls)  # doctest: +SKIP
"""
import json

_REPLY = "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n" \
         "content-length: {length}\r\nconnection: close\r\n\r\n"


def _raw_reply(status, reason, message):
    """A complete HTTP response in TF Serving's error JSON, written past the protocol's
    own state machine: the connection closes right after it."""
    body = json.dumps({"error": message}).encode()
    head = _REPLY.format(status=status, reason=reason, length=len(body)).encode()
    return head + body


class _HeaderGuard:
    """Mixed in before a uvicorn HTTP protocol class. A request's headers are done when the
    protocol has made a new request cycle for them (both h11 and httptools make one, in
    `data_received` or, for a pipelined request, in `on_response_complete`)."""

    header_timeout_s = 10.0
    max_header_bytes = 64 << 10

    def connection_made(self, transport):
        super().connection_made(transport)
        self._guard_cycle, self._guard_bytes, self._guard_timer = None, 0, None
        self._arm()

    def _arm(self):
        self._disarm()
        self._guard_bytes = 0
        self._guard_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _disarm(self):
        if self._guard_timer is not None:
            self._guard_timer.cancel()
            self._guard_timer = None

    def _awaiting_headers(self):
        return self.cycle is None or self.cycle.response_complete

    def data_received(self, data):
        super().data_received(data)
        if self._guard_timer is None or self.transport.is_closing():
            return
        if not self._awaiting_headers():
            self._disarm()  # the headers are complete: the app bounds the body
            return
        # counted only while headers are incomplete after this chunk, so body bytes that
        # share a chunk with the end of the headers never count
        self._guard_bytes += len(data)
        if self._guard_bytes > self.max_header_bytes:
            self._refuse(431, "Request Header Fields Too Large",
                         f"the request line and headers exceed {self.max_header_bytes} "
                         f"bytes (--rest_api_max_header_bytes)")

    def on_response_complete(self):
        super().on_response_complete()
        if not self.transport.is_closing() and self._awaiting_headers():
            self._arm()  # the next request on this keep-alive connection

    def connection_lost(self, exc):
        self._disarm()
        super().connection_lost(exc)

    def _headers_late(self):
        self._guard_timer = None
        if self.transport.is_closing() or not self._awaiting_headers():
            return
        if self._guard_bytes:
            self._refuse(408, "Request Timeout",
                         f"the request line and headers did not arrive within "
                         f"{self.header_timeout_s:g} s (--rest_api_header_timeout_seconds)")
        else:  # an idle connection: nothing to answer
            self.transport.close()

    def _refuse(self, status, reason, message):
        self._disarm()
        self.logger.warning("tensorlite-serving: %s: closing the connection from %s",
                            message, self.client)
        self.transport.write(_raw_reply(status, reason, message))
        self.transport.close()


def _base_protocol(http):
    """uvicorn's protocol class for `http` ("auto": httptools when installed, else h11)."""
    if http in ("auto", "httptools"):
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # noqa: PLC0415
            return HttpToolsProtocol
        except ImportError:
            if http == "httptools":
                raise
    from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415
    return H11Protocol


def guarded_protocol(http, header_timeout_s, max_header_bytes):
    """A uvicorn HTTP protocol class (`http`: "auto", "h11" or "httptools") whose requests
    must send their line and headers within `header_timeout_s` and `max_header_bytes`."""
    base = _base_protocol(http)
    return type(f"Guarded{base.__name__}", (_HeaderGuard, base),
                {"header_timeout_s": float(header_timeout_s),
                 "max_header_bytes": int(max_header_bytes)})
