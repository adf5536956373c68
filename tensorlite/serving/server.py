"""The model server: models and their versions, a poll loop, batchers and metrics.

`ModelServer` owns one `ServedModel` per configured model (from `--model_name` /
`--model_base_path` or a `--model_config_file`, which is re-read every
`--model_config_file_poll_wait_seconds`: models added there start loading, models removed
stop being served), polls their base paths every `file_system_poll_wait_seconds`, and, with
batching on, one `Batcher` per served signature. `rest_app.build_app` puts the REST API on
top of it.

Example:
    >>> server = ModelServer([ModelSpec("m", "/models/m")], loader=load_servable)
    >>> server.start(); ...; server.stop()
"""
import collections
import logging
import threading
import time

from prometheus_client import CollectorRegistry, Gauge, Histogram
from prometheus_client.core import Metric

from tensorlite.framework import errors
from tensorlite.serving.batching import Batcher
from tensorlite.serving.config import parse_model_config
from tensorlite.serving.manager import ServedModel

_log = logging.getLogger("tensorlite.serving")
_LATENCY_BUCKETS_US = (100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000,
                       500000, 1000000, 2500000, 5000000, float("inf"))


class RequestCount:
    """`:tensorflow:serving:request_count{model_name,status}` under TF Serving's exact name
    (prometheus_client's Counter would append `_total`), exposed as an untyped metric."""

    NAME = ":tensorflow:serving:request_count"

    def __init__(self):
        self._counts = collections.Counter()
        self._lock = threading.Lock()

    def inc(self, model_name, status):
        with self._lock:
            self._counts[(model_name, status)] += 1

    def collect(self):
        m = Metric(self.NAME, "Total number of inference requests.", "unknown")
        with self._lock:
            items = sorted(self._counts.items())
        for (model, status), n in items:
            m.add_sample(self.NAME, {"model_name": model, "status": status}, n)
        yield m


class Metrics:
    """TF Serving's Prometheus metrics, in a registry of this server's own."""

    def __init__(self):
        self.registry = CollectorRegistry()
        self.requests = RequestCount()
        self.registry.register(self.requests)
        self.latency = Histogram(":tensorflow:serving:request_latency",
                                 "Distribution of wall time (in microseconds) for inference "
                                 "requests.", ["model_name", "API", "entrypoint"],
                                 buckets=_LATENCY_BUCKETS_US, registry=self.registry)
        self.runtime = Histogram(":tensorflow:serving:runtime_latency",
                                 "Distribution of wall time (in microseconds) for model "
                                 "runtime.", ["model_name", "API", "runtime"],
                                 buckets=_LATENCY_BUCKETS_US, registry=self.registry)
        self.batch_size = Histogram(":tensorflow:serving:batching_session:processed_batch_size",
                                    "Rows per batched model call.", ["model_name"],
                                    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
                                    registry=self.registry)
        self.available = Gauge(":tensorflow:serving:available_versions",
                               "Number of available versions of each model.", ["model_name"],
                               registry=self.registry)
        self._children = {}  # (metric name, labels) -> child: labels() costs a lock and a hash

    def _child(self, metric, labels):
        key = (metric._name, labels)  # noqa: SLF001 - the metric's registered name
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def observe_request(self, model_name, api, status, seconds):
        """Counts one REST inference request and its wall time."""
        self.requests.inc(model_name, status)
        self._child(self.latency, (model_name, api, "REST")).observe(seconds * 1e6)

    def observe_runtime(self, model_name, api, seconds):
        """One model call's wall time."""
        self._child(self.runtime, (model_name, api, "tensorlite")).observe(seconds * 1e6)


def _logged(step, what):
    """Runs one step of the poll loop; an error is logged and the loop goes on, so one bad
    model directory or config read never stops new versions of every model loading."""
    try:
        step()
    except Exception:  # noqa: BLE001 - the poll thread must outlive any one failure
        _log.exception("tensorlite-serving: %s failed; retrying at the next poll", what)


class ModelServer:
    """Serves models; see the module docstring."""

    def __init__(self, specs, loader, batching=None, poll_seconds=1.0, config_file=None,
                 config_poll_seconds=0):
        self._loader, self.batching = loader, batching
        self.poll_seconds, self.config_file = poll_seconds, config_file
        self.config_poll_seconds = config_poll_seconds
        self.metrics = Metrics()
        self._lock = threading.Lock()
        self.models = {}
        self._batchers = {}  # (model, version, signature) -> Batcher
        self._stop = threading.Event()
        self._thread = None
        self._config_text = None
        self._apply(specs)

    def _apply(self, specs):
        """Makes the served set equal `specs` (new models start loading at the next poll)."""
        with self._lock:
            wanted = {s.name: s for s in specs}
            for name in list(self.models):
                if name not in wanted:
                    del self.models[name]
                    self._close_batchers(lambda key, n=name: key[0] == n)
            for name, spec in wanted.items():
                current = self.models.get(name)
                if current is None or current.spec.base_path != spec.base_path:
                    self.models[name] = ServedModel(spec, self._loader, self._on_change)
                else:
                    current.spec = spec  # policy and labels may change while serving

    def _on_change(self, model):
        available = model.available_versions()
        self.metrics.available.labels(model.spec.name).set(len(available))
        self._close_batchers(lambda key: key[0] == model.spec.name and key[1] not in available)

    def _close_batchers(self, which):
        with self._lock:
            closing = [k for k in self._batchers if which(k)]
            batchers = [self._batchers.pop(k) for k in closing]
        for b in batchers:  # requests already queued are still served
            threading.Thread(target=b.close, daemon=True).start()

    # -- the poll loop -----------------------------------------------------------------------
    def poll_once(self, wait=False):
        if self.config_file and self.config_poll_seconds > 0:
            self._reload_config()
        for model in list(self.models.values()):
            model.poll(wait=wait)

    def _reload_config(self):
        with open(self.config_file, encoding="utf-8") as f:
            text = f.read()
        if text != self._config_text:
            try:
                specs = parse_model_config(text, self.config_file)
            except ValueError as e:  # keep serving the old config
                print(f"tensorlite-serving: ignoring the new {self.config_file}: {e}",
                      flush=True)
                self._config_text = text
                return
            self._config_text = text
            self._apply(specs)

    def _loop(self):
        last_config = time.monotonic()
        while not self._stop.wait(self.poll_seconds):
            for model in list(self.models.values()):
                _logged(model.poll, f"polling model {model.spec.name}")
            if self.config_file and self.config_poll_seconds > 0 and \
                    time.monotonic() - last_config >= self.config_poll_seconds:
                last_config = time.monotonic()
                _logged(self._reload_config, f"re-reading {self.config_file}")

    def start(self):
        """Loads what is on disk now (waiting for it), then polls in the background."""
        if self.config_file and self._config_text is None:
            with open(self.config_file, encoding="utf-8") as f:
                self._config_text = f.read()
        for model in list(self.models.values()):
            model.poll()
        time.sleep(min(self.poll_seconds, 0.05))
        for model in list(self.models.values()):  # a second look: stable dirs load now
            model.poll(wait=True)
        if self.poll_seconds > 0:
            self._thread = threading.Thread(target=self._loop, daemon=True,
                                            name="tensorlite-serving-poll")
            self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._close_batchers(lambda key: True)

    # -- requests ------------------------------------------------------------------------------
    def model(self, name):
        with self._lock:
            model = self.models.get(name)
        if model is None:
            raise errors.NotFoundError(None, None, f"Servable not found for request: "
                                       f"Latest({name})")
        return model

    def batcher(self, name, version, signature_name, signature):
        """The Batcher of one served signature (made on first use); None once that version
        is no longer available (a request still holding it runs unbatched, and no batcher
        is left behind for a version that nothing will close)."""
        key = (name, version, signature_name)
        with self._lock:
            b = self._batchers.get(key)
            if b is None:
                model = self.models.get(name)
                if model is None or version not in model.available_versions():
                    return None
                hist = self.metrics.batch_size.labels(name)

                def run(inputs, sig=signature):
                    hist.observe(next(iter(inputs.values())).shape[0])
                    return sig.run(inputs)
                b = self._batchers[key] = Batcher(run, self.batching,
                                                  name=f"{name}-{version}-{signature_name}")
        return b
