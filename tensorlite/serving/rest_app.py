"""TensorFlow Serving's REST API as an ASGI app (Starlette), over a `ModelServer`.

    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]             model status
    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]/metadata    signature defs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:predict     instances | inputs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:classify    examples (+ context)
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:regress     examples (+ context)
    GET  /monitoring/prometheus/metrics

Errors are `{"error": "..."}` with the HTTP status TF Serving maps each error code to.

Example:
    >>> app = build_app(server)     # then: uvicorn.run(app, host="127.0.0.1", port=8501)
"""
import re
import time

import numpy as np
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.routing import Route

from tensorlite.framework import errors
from tensorlite.serving import json_codec
from tensorlite.serving.json_codec import RequestError

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
MAX_BODY_BYTES = 64 << 20


async def _reply(send, obj, status=200):
    body = json_codec.dumps(obj)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _status_of(exc):
    if isinstance(exc, RequestError):
        return exc.status
    if isinstance(exc, errors.OpError):
        return _HTTP_STATUS.get(exc.error_code, 500)
    if isinstance(exc, (TypeError, ValueError)):  # bad input reaching the model
        return 400
    return 500


async def _body(scope, receive, max_bytes):
    """The request body, refused with 413 past `max_bytes` (by its Content-Length before
    reading, or while reading a chunked one)."""
    for key, value in scope["headers"]:
        if key == b"content-length" and value.isdigit() and int(value) > max_bytes:
            raise RequestError(f"Request body of {value.decode()} bytes exceeds the limit of "
                               f"{max_bytes}", status=413)
    chunks, total = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise RequestError("the client disconnected before sending the body", status=499)
        chunk = message.get("body", b"")
        total += len(chunk)
        if total > max_bytes:
            raise RequestError(f"Request body exceeds the limit of {max_bytes} bytes",
                               status=413)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


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


def build_app(server, max_body_bytes=MAX_BODY_BYTES):
    """The ASGI app serving `server`'s models: `/v1/models/...` is answered by a plain ASGI
    handler (the per-request path: no routing tables, request or response objects between
    the socket and the model), everything else by a Starlette app (metrics, 404s)."""
    api = {"/metadata": "GetModelMetadata", ":predict": "Predict", ":classify": "Classify",
           ":regress": "Regress", None: "GetModelStatus"}

    async def models(scope, receive, send):
        t0 = time.perf_counter()
        method, path = scope["method"], scope["path"]
        m = _PATH.match(path[len(_MODELS):])
        if m is None:
            return await _reply(send, {"error": f"Malformed request: {method} {path}"}, 404)
        name, verb = m["name"], m["verb"]
        status = "OK"
        try:
            want = "POST" if verb in _INFER_VERBS else "GET"
            if method != want:
                raise RequestError(f"Malformed request: {method} {path}; {api[verb]} takes "
                                   f"{want}", status=405)
            version = int(m["version"]) if m["version"] is not None else None
            model = server.model(name)
            if verb is None:
                reply = model.status(version, m["label"])
            elif verb == "/metadata":
                reply = _metadata(model, version, m["label"])
            else:
                doc = json_codec.loads(await _body(scope, receive, max_body_bytes))
                reply = await _infer(server, model, verb, version, m["label"], doc)
            code = 200
        except Exception as e:  # noqa: BLE001 - every error is a JSON reply
            status = type(e).__name__
            code = _status_of(e)
            reply = {"error": e.message if isinstance(e, errors.OpError) else str(e)}
        await _reply(send, reply, code)
        if verb in _INFER_VERBS:
            server.metrics.observe_request(name, api[verb], status, time.perf_counter() - t0)

    async def metrics(request):
        return Response(generate_latest(server.metrics.registry),
                        media_type=CONTENT_TYPE_LATEST)

    rest = Starlette(routes=[Route("/monitoring/prometheus/metrics", metrics, methods=["GET"])])

    async def app(scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith(_MODELS):
            await models(scope, receive, send)
        else:
            await rest(scope, receive, send)
    return app


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
            None, None, f"Serving signature name: \"{name}\" not found in signature def; "
            f"the model {model_name} has {sorted(servable.signatures)}")
    return name, sig


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
    outputs = await future if future is not None else await run_in_threadpool(sig.run, inputs)
    server.metrics.observe_runtime(model_name, api, time.perf_counter() - t0)
    return outputs


async def _infer(server, model, verb, version, label, doc):
    v, servable = model.get(version, label)
    sig_name, sig = _signature(servable, doc, model.spec.name)
    if verb == ":predict":
        row_format, inputs = json_codec.parse_predict(doc, sig.inputs)
        outputs = await _run(server, model.spec.name, v, sig_name, sig, inputs)
        return json_codec.format_predict(outputs, row_format)
    method = CLASSIFY if verb == ":classify" else REGRESS
    if sig.method_name != method:
        raise errors.InvalidArgumentError(
            None, None, f"Expected {verb[1:]} signature method_name to be {method}. Was: "
            f"{sig.method_name}")
    (input_name,) = list(sig.inputs) if len(sig.inputs) == 1 else (None,)
    if input_name is None:
        raise errors.InvalidArgumentError(None, None, f"{verb[1:]} signatures take one input "
                                          f"of serialized tf.Example protos")
    serialized = np.array([_example_bytes(f) for f in json_codec.example_features(doc)],
                          dtype=object)
    outputs = await _run(server, model.spec.name, v, sig_name, sig, {input_name: serialized},
                         verb[1:].capitalize())
    if verb == ":regress":
        values = np.asarray(outputs.get("outputs", next(iter(outputs.values()))))
        return {"result": values.reshape(len(serialized), -1)[:, 0].tolist()}
    scores = outputs.get("scores")
    classes = outputs.get("classes")
    if scores is None and classes is None:
        raise errors.InvalidArgumentError(None, None, "a classify signature must output "
                                          "'classes' and/or 'scores'")
    n = len(serialized)
    scores = np.asarray(scores).reshape(n, -1) if scores is not None else None
    classes = np.asarray(classes).reshape(n, -1) if classes is not None else None
    k = (scores if scores is not None else classes).shape[1]
    result = []
    for i in range(n):
        result.append([[classes[i, j].decode() if classes is not None else "",
                        float(scores[i, j]) if scores is not None else 0.0] for j in range(k)])
    return {"result": result}


def _example_bytes(features):
    from tensorlite.train import example as ex  # noqa: PLC0415
    feats = ex.Features()
    for key, (kind, values) in features.items():
        getattr(feats.feature[key], kind).value.extend(values)
    return ex.Example(features=feats).SerializeToString()
