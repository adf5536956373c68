"""Servable versions of one model, as TF Serving's source, loader and manager handle them.

The source polls `base_path` for numbered version directories; the version policy
(latest N, all, specific) turns them into the aspired versions. Each aspired version is
loaded on a background thread, so serving never waits for a load. A version is loaded only
once its directory has stopped changing for one poll and its SavedModel loads completely (a
directory still being copied fails to load, is reported, and is retried when it changes
again). Versions that are no longer aspired are unloaded only once an aspired version is
available (availability-preserving transitions): requests in flight keep the servable they
started with, so none is dropped. A version that fails to load is reported in the model's
status while the old one keeps serving.

Example:
    >>> model = ServedModel(ModelSpec("m", "/models/m"), loader=load_servable)
    >>> model.poll()                    # the server calls this every poll interval
    >>> model.get().signatures          # the latest available version
"""
import logging
import os
import re
import threading

from tensorlite.framework import errors

_log = logging.getLogger("tensorlite.serving")
# A version is a directory named by ASCII digits that fit an int64, as TF Serving's source
# parses them. str.isdigit() alone also accepts '²' or '١', which int() then refuses
_VERSION = re.compile(r"[0-9]{1,19}")
_INT64_MAX = (1 << 63) - 1


class VersionState:
    __slots__ = ("version", "state", "error", "servable", "fingerprint")

    def __init__(self, version):
        self.version, self.state, self.error = version, "START", None
        self.servable, self.fingerprint = None, None

    def status(self):
        code = "OK" if self.error is None else self.error[0]
        return {"version": str(self.version), "state": self.state,
                "status": {"error_code": code,
                           "error_message": "" if self.error is None else self.error[1]}}


def _dir_fingerprint(path):
    """What changes while a directory is being written: names, sizes, mtimes."""
    entries = []
    for root, _, files in os.walk(path):
        for f in files:
            try:
                st = os.stat(os.path.join(root, f))
            except OSError:
                continue
            entries.append((os.path.relpath(os.path.join(root, f), path), st.st_size,
                            st.st_mtime_ns))
    return tuple(sorted(entries))


def _error_code(exc):
    if isinstance(exc, errors.OpError):
        return errors.CODE_NAMES.get(exc.error_code, "UNKNOWN")
    return "UNKNOWN"


class ServedModel:
    """The versions of one model: polls, loads, swaps and looks them up."""

    def __init__(self, spec, loader, on_change=None):
        self.spec = spec
        self._load = loader
        self._on_change = on_change or (lambda model: None)
        self._lock = threading.Lock()
        self._versions = {}  # version -> VersionState
        self._pending = {}  # version -> fingerprint seen at the previous poll
        self._threads = []
        self._skipped = set()  # entries already reported as not being versions

    # -- the source: what is on disk and what the policy aspires to --------------------------
    def _on_disk(self):
        """{version: path} of the numbered version directories under the base path; any
        other entry is reported once and skipped, so a stray name never stops the poll."""
        try:
            names = os.listdir(self.spec.base_path)
        except OSError:
            return {}
        out = {}
        for n in names:
            path = os.path.join(self.spec.base_path, n)
            if _VERSION.fullmatch(n) and int(n) <= _INT64_MAX:
                if os.path.isdir(path):
                    out[int(n)] = path
            elif n not in self._skipped:
                self._skipped.add(n)
                _log.warning("tensorlite-serving: model %s: ignoring %r in %s: version "
                             "directories are named by an int64 in ASCII digits",
                             self.spec.name, n[:100], self.spec.base_path)
        return out

    def _aspired(self, on_disk):
        kind = self.spec.policy[0]
        if kind == "all":
            return set(on_disk)
        if kind == "specific":
            return set(self.spec.policy[1]) & set(on_disk)
        return set(sorted(on_disk)[-self.spec.policy[1]:])

    def poll(self, wait=False):
        """One pass of the source: start loads of new aspired versions, unload the old
        ones that an available version replaces. `wait` joins the loads (tests, startup)."""
        on_disk = self._on_disk()
        aspired = self._aspired(on_disk)
        for v in sorted(aspired):
            path = on_disk[v]
            fp = _dir_fingerprint(path)
            with self._lock:
                st = self._versions.get(v)
                if st is not None and (st.state in ("LOADING", "AVAILABLE")
                                       or st.fingerprint == fp):
                    continue  # loaded, loading, or failed and unchanged since
                if self._pending.get(v) != fp:  # still changing: look again next poll
                    self._pending[v] = fp
                    continue
                st = self._versions.setdefault(v, VersionState(v))
                st.state, st.error, st.fingerprint = "LOADING", None, fp
            t = threading.Thread(target=self._load_version, args=(st, path), daemon=True,
                                 name=f"tensorlite-serving-load-{self.spec.name}-{v}")
            t.start()
            self._threads.append(t)
        if wait:
            self.join_loads()
        self._unload_unaspired(aspired)

    def join_loads(self, timeout=None):
        for t in list(self._threads):
            t.join(timeout)
        self._threads = [t for t in self._threads if t.is_alive()]

    def _load_version(self, st, path):
        try:
            servable = self._load(path)
        except Exception as e:  # noqa: BLE001 - reported in the model's status
            with self._lock:
                st.state, st.servable = "END", None
                st.error = (_error_code(e), f"Failed to load version {st.version} of "
                                            f"{self.spec.name} from {path}: {e}")
        else:
            with self._lock:
                st.servable, st.state = servable, "AVAILABLE"
            self._unload_unaspired(self._aspired(self._on_disk()))
        self._on_change(self)

    def _unload_unaspired(self, aspired):
        with self._lock:
            if not any(s.state == "AVAILABLE" for v, s in self._versions.items()
                       if v in aspired):
                return  # keep serving what we have until a replacement is ready
            for v, st in self._versions.items():
                if v not in aspired and st.state == "AVAILABLE":
                    st.servable = None  # requests in flight keep their own reference
                    st.state = "END"
                elif v not in aspired and st.state == "END" and st.error is not None:
                    st.error = None  # a failed version that is no longer wanted
        self._on_change(self)

    # -- lookups -------------------------------------------------------------------------------
    def _request_name(self, version, label):
        if label is not None:
            return f"Specific({self.spec.name}, label {label})"
        if version is not None:
            return f"Specific({self.spec.name}, {version})"
        return f"Latest({self.spec.name})"

    def resolve(self, version=None, label=None):
        """The version number a request names (a label through `version_labels`)."""
        if label is not None:
            if label not in self.spec.labels:
                raise errors.NotFoundError(None, None, f"Unrecognized servable version label: "
                                           f"{label}")
            return self.spec.labels[label]
        return version

    def get(self, version=None, label=None):
        """The servable for a request: a specific version, a labelled one, or the latest
        available; NotFoundError with TF Serving's message otherwise."""
        wanted = self.resolve(version, label)
        with self._lock:
            if wanted is not None:
                st = self._versions.get(wanted)
                if st is not None and st.state == "AVAILABLE":
                    return wanted, st.servable
            else:
                available = [v for v, s in self._versions.items() if s.state == "AVAILABLE"]
                if available:
                    v = max(available)
                    return v, self._versions[v].servable
        raise errors.NotFoundError(None, None, f"Servable not found for request: "
                                   f"{self._request_name(version, label)}")

    def status(self, version=None, label=None):
        """GetModelStatusResponse's JSON: every known version, or the one asked for."""
        wanted = self.resolve(version, label)
        with self._lock:
            states = sorted(self._versions.values(), key=lambda s: -s.version)
            if wanted is not None:
                states = [s for s in states if s.version == wanted]
                if not states:
                    raise errors.NotFoundError(
                        None, None, f"Could not find version {wanted} of model "
                        f"{self.spec.name}")
            elif not states:
                raise errors.NotFoundError(None, None, f"Could not find any versions of model "
                                           f"{self.spec.name}")
            return {"model_version_status": [s.status() for s in states]}

    def available_versions(self):
        with self._lock:
            return sorted(v for v, s in self._versions.items() if s.state == "AVAILABLE")
