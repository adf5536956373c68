"""TensorFlow Serving's REST API as an ASGI app (Starlette), over a `ModelServer`.

    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]             model status
    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]/metadata    signature defs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:predict     instances | inputs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:classify    examples (+ context)
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:regress     examples (+ context)
    GET  /monitoring/prometheus/metrics

Errors are `{"error": "..."}` with the HTTP status TF Serving maps each error code to.

One client cannot stall the others (`limits.RestLimits`): the body is read under a size
limit (413, by Content-Length before reading any of it, or as a chunked body arrives) and a
deadline (408); the whole request under `--rest_api_timeout_in_ms` (504, TF Serving's
DEADLINE_EXCEEDED); bodies and replies over `limits.OFFLOAD_BYTES` are decoded, converted
and encoded on worker threads, so the event loop keeps answering other requests meanwhile.

Example:
    >>> app = build_app(server)     # then: uvicorn.run(app, host="127.0.0.1", port=8501)
"""
import asyncio
import dataclasses
import functools
import re
import time

import anyio.to_thread
import numpy as np
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from tensorlite.framework import errors
from tensorlite.serving import json_codec
from tensorlite.serving.json_codec import RequestError, echo
from tensorlite.serving.limits import OFFLOAD_BYTES, RestLimits

# tensorflow::error code -> HTTP status, as TF Serving's REST handler maps them (others: 500)
_HTTP_STATUS = {errors.INVALID_ARGUMENT: 400, errors.FAILED_PRECONDITION: 400,
                errors.OUT_OF_RANGE: 400, errors.NOT_FOUND: 404, errors.ALREADY_EXISTS: 409,
                errors.ABORTED: 409, errors.PERMISSION_DENIED: 403,
                errors.UNAUTHENTICATED: 401, errors.RESOURCE_EXHAUSTED: 429,
                errors.UNIMPLEMENTED: 501, errors.UNAVAILABLE: 503,
                errors.DEADLINE_EXCEEDED: 504, errors.CANCELLED: 499}
_PATH = re.compile(r"^(?P<name>[^/:]+)(?:/versions/(?P<version>\d+)|/labels/(?P<label>[^/:]+))?"
                   r"(?P<verb>/metadata|:predict|:classify|:regress)?$")
PREDICT, CLASSIFY, REGRESS = ("tensorflow/serving/predict", "tensorflow/serving/classify",
                              "tensorflow/serving/regress")
DEFAULT_SIGNATURE = "serving_default"
_MODELS = "/v1/models/"
_INFER_VERBS = (":predict", ":classify", ":regress")
MAX_BODY_BYTES = RestLimits.max_body_bytes
MAX_ERROR_CHARS = 2000  # an error message longer than this is cut (the client wrote it)


async def _reply(send, body, status=200, close=False):
    """Sends an encoded JSON reply; `close` ends the connection after it (the request's
    body was not read in full, so the connection cannot carry another request)."""
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _offload(big, fn, *args):
    """fn(*args): on a worker thread when `big` (the event loop serves other clients
    meanwhile; a timed-out request abandons the thread rather than waiting for it), else
    inline, where a thread hop would cost more than the call."""
    if not big:
        return fn(*args)
    return await anyio.to_thread.run_sync(functools.partial(fn, *args),
                                          abandon_on_cancel=True)


def _error_json(exc):
    message = exc.message if isinstance(exc, errors.OpError) else str(exc)
    if len(message) > MAX_ERROR_CHARS:
        message = f"{message[:MAX_ERROR_CHARS]}... ({len(message)} characters in all)"
    return json_codec.dumps({"error": message})


def _status_of(exc):
    if isinstance(exc, RequestError):
        return exc.status
    if isinstance(exc, errors.OpError):
        return _HTTP_STATUS.get(exc.error_code, 500)
    if isinstance(exc, (TypeError, ValueError)):  # bad input reaching the model
        return 400
    return 500


def _content_length(scope, max_bytes):
    """The request's Content-Length (None when chunked); 413 past `max_bytes`, before any
    of the body is read."""
    for key, value in scope["headers"]:
        if key == b"content-length":
            if not value.isdigit():
                raise RequestError(f"Content-Length {echo(value)} is not a byte count")
            if int(value) > max_bytes:
                raise RequestError(f"Request body of {int(value)} bytes exceeds the limit of "
                                   f"{max_bytes} (--max_body_bytes)", status=413)
            return int(value)
    return None


async def _body(scope, receive, limits):
    """The request body, refused with 413 past `limits.max_body_bytes` (by Content-Length
    before reading, or while a chunked one arrives) and 408 when it has not all arrived
    within `limits.body_timeout_s`."""
    max_bytes = limits.max_body_bytes
    _content_length(scope, max_bytes)
    chunks, total = [], 0
    try:
        async with asyncio.timeout(limits.body_timeout_s):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise RequestError("the client disconnected before sending the body",
                                       status=499)
                chunk = message.get("body", b"")
                total += len(chunk)
                if total > max_bytes:
                    raise RequestError(f"Request body exceeds the limit of {max_bytes} bytes "
                                       f"(--max_body_bytes)", status=413)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except TimeoutError:
        raise RequestError(f"The request body did not arrive within {limits.body_timeout_s:g} "
                           f"s (--rest_api_body_timeout_seconds); {total} bytes had",
                           status=408) from None


def _shape_json(shape):
    if shape is None:
        return {"dim": [], "unknown_rank": True}
    return {"dim": [{"size": str(-1 if d is None else d), "name": ""} for d in shape],
            "unknown_rank": False}


def _dtype_json(dtype):
    return json_codec._dt_name(dtype)  # noqa: SLF001 - one naming rule for both


def signature_def_json(name, sig):
    """A SignatureDef in TF Serving's JSON form."""
    def tensors(specs, names):
        return {n: {"dtype": _dtype_json(dt), "tensor_shape": _shape_json(shape),
                    "name": names.get(n, n)} for n, (dt, shape) in specs.items()}
    return {"inputs": tensors(sig.inputs, getattr(sig, "input_tensor_names", {})),
            "outputs": tensors(sig.outputs, getattr(sig, "output_tensor_names", {})),
            "method_name": sig.method_name}


_API = {"/metadata": "GetModelMetadata", ":predict": "Predict", ":classify": "Classify",
        ":regress": "Regress", None: "GetModelStatus"}


async def _handle(server, limits, scope, receive, m, read):
    """The encoded reply to a `/v1/models/...` request that `m` (_PATH) matched; sets
    read[0] once its body has been read in full."""
    method, path, verb = scope["method"], scope["path"], m["verb"]
    want = "POST" if verb in _INFER_VERBS else "GET"
    if method != want:
        raise RequestError(f"Malformed request: {method} {echo(path)}; {_API[verb]} takes "
                           f"{want}", status=405)
    version = int(m["version"]) if m["version"] is not None else None
    model = server.model(m["name"])
    if verb is None:
        return json_codec.dumps(model.status(version, m["label"]))
    if verb == "/metadata":
        return json_codec.dumps(_metadata(model, version, m["label"]))
    body = await _body(scope, receive, limits)
    read[0] = True
    big = len(body) > OFFLOAD_BYTES
    doc = await _offload(big, json_codec.loads, body)
    del body  # the decoded document replaces it
    return await _infer(server, model, verb, version, m["label"], doc, big)


def build_app(server, max_body_bytes=None, limits=None):
    """The ASGI app serving `server`'s models under `limits` (a RestLimits; its defaults
    when None, with `max_body_bytes` overriding its body limit): `/v1/models/...` is
    answered by a plain ASGI handler (the per-request path: no routing tables, request or
    response objects between the socket and the model), everything else by a Starlette
    app (metrics, 404s)."""
    limits = limits or RestLimits()
    if max_body_bytes is not None:
        limits = dataclasses.replace(limits, max_body_bytes=max_body_bytes)

    async def models(scope, receive, send):
        t0 = time.perf_counter()
        method, path = scope["method"], scope["path"]
        m = _PATH.match(path[len(_MODELS):])
        if m is None:
            body = json_codec.dumps({"error": f"Malformed request: {method} {echo(path)}"})
            return await _reply(send, body, 404)
        verb, status, code, read = m["verb"], "OK", 200, [False]
        deadline = asyncio.timeout(limits.request_timeout_ms / 1000)
        try:
            async with deadline:
                reply = await _handle(server, limits, scope, receive, m, read)
        except Exception as e:  # noqa: BLE001 - every error is a JSON reply
            e = _timed_out(limits) if deadline.expired() else e
            status, code, reply = type(e).__name__, _status_of(e), _error_json(e)
        # a POST whose body was not read in full leaves the connection mid-request
        await _reply(send, reply, code, close=method == "POST" and not read[0])
        if verb in _INFER_VERBS:
            server.metrics.observe_request(m["name"], _API[verb], status,
                                           time.perf_counter() - t0)

    async def metrics(request):
        return Response(generate_latest(server.metrics.registry),
                        media_type=CONTENT_TYPE_LATEST)

    rest = Starlette(routes=[Route("/monitoring/prometheus/metrics", metrics, methods=["GET"])])

    async def app(scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith(_MODELS):
            await models(scope, receive, send)
        else:
            await rest(scope, receive, send)
    app.limits = limits
    return app


def _timed_out(limits):
    """TF Serving's answer to a request past --rest_api_timeout_in_ms."""
    return errors.DeadlineExceededError(
        None, None, f"Timed out waiting for the request to complete: it took longer than "
        f"--rest_api_timeout_in_ms={limits.request_timeout_ms}")


def _metadata(model, version, label):
    v, servable = model.get(version, label)
    return {"model_spec": {"name": model.spec.name, "signature_name": "", "version": str(v)},
            "metadata": {"signature_def": {"signature_def": {
                n: signature_def_json(n, s) for n, s in servable.signatures.items()}}}}


def _signature(servable, doc, model_name):
    name = doc.get("signature_name") or DEFAULT_SIGNATURE
    if not isinstance(name, str):
        raise RequestError("'signature_name' must be a string")
    sig = servable.signatures.get(name)
    if sig is None:
        raise errors.InvalidArgumentError(
            None, None, f"Serving signature name: \"{_clip(name)}\" not found in signature "
            f"def; "
            f"the model {model_name} has {sorted(servable.signatures)}")
    return name, sig


def _clip(text):
    """`text` (the client's own) cut to ECHO_CHARS characters for an error message."""
    if len(text) <= json_codec.ECHO_CHARS:
        return text
    return f"{text[:json_codec.ECHO_CHARS]}... ({len(text)} characters)"


async def _run(server, model_name, version, sig_name, sig, inputs, api="Predict"):
    t0 = time.perf_counter()
    future = None
    if server.batching is not None:
        batcher = server.batcher(model_name, version, sig_name, sig)
        try:
            future = batcher.submit_async(inputs) if batcher is not None else None
        except errors.UnavailableError:
            if not batcher.closed:  # the queue is full: 503, as TF Serving answers
                raise
        # future None: the version was unloaded since this request looked it up; it still
        # holds its servable, so it runs unbatched rather than failing mid-swap
    # unbatched, the model runs on a worker thread that a timed-out request abandons
    outputs = await future if future is not None else await _offload(True, sig.run, inputs)
    server.metrics.observe_runtime(model_name, api, time.perf_counter() - t0)
    return outputs


async def _infer(server, model, verb, version, label, doc, big):
    """The encoded reply to an inference request; `big` (the body was large) moves the
    conversions to and from JSON off the event loop."""
    v, servable = model.get(version, label)
    sig_name, sig = _signature(servable, doc, model.spec.name)
    if verb == ":predict":
        row_format, inputs = await _offload(big, json_codec.parse_predict, doc, sig.inputs)
        del doc
        outputs = await _run(server, model.spec.name, v, sig_name, sig, inputs)
        big = big or sum(np.asarray(o).nbytes for o in outputs.values()) > OFFLOAD_BYTES
        return await _offload(big, _encode_predict, outputs, row_format)
    method = CLASSIFY if verb == ":classify" else REGRESS
    if sig.method_name != method:
        raise errors.InvalidArgumentError(
            None, None, f"Expected {verb[1:]} signature method_name to be {method}. Was: "
            f"{sig.method_name}")
    (input_name,) = list(sig.inputs) if len(sig.inputs) == 1 else (None,)
    if input_name is None:
        raise errors.InvalidArgumentError(None, None, f"{verb[1:]} signatures take one input "
                                          f"of serialized tf.Example protos")
    serialized = await _offload(big, _serialized_examples, doc)
    outputs = await _run(server, model.spec.name, v, sig_name, sig, {input_name: serialized},
                         verb[1:].capitalize())
    return await _offload(big, _encode_result, verb, outputs, len(serialized))


def _encode_predict(outputs, row_format):
    return json_codec.dumps(json_codec.format_predict(outputs, row_format))


def _serialized_examples(doc):
    return np.array([_example_bytes(f) for f in json_codec.example_features(doc)],
                    dtype=object)


def _encode_result(verb, outputs, n):
    """The encoded reply of a classify or regress request of `n` examples."""
    if verb == ":regress":
        values = np.asarray(outputs.get("outputs", next(iter(outputs.values()))))
        return json_codec.dumps({"result": values.reshape(n, -1)[:, 0].tolist()})
    scores = outputs.get("scores")
    classes = outputs.get("classes")
    if scores is None and classes is None:
        raise errors.InvalidArgumentError(None, None, "a classify signature must output "
                                          "'classes' and/or 'scores'")
    scores = np.asarray(scores).reshape(n, -1) if scores is not None else None
    classes = np.asarray(classes).reshape(n, -1) if classes is not None else None
    k = (scores if scores is not None else classes).shape[1]
    result = []
    for i in range(n):
        result.append([[classes[i, j].decode() if classes is not None else "",
                        float(scores[i, j]) if scores is not None else 0.0] for j in range(k)])
    return json_codec.dumps({"result": result})


def _example_bytes(features):
    from tensorlite.protos import example as ex  # noqa: PLC0415
    feats = ex.Features()
    for key, (kind, values) in features.items():
        getattr(feats.feature[key], kind).value.extend(values)
    return ex.Example(features=feats).SerializeToString()
