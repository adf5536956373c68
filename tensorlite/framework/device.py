"""`tf.device` and the devices `tf.config` lists.

tensorlite computes on the CPU (through NumPy). Device strings are parsed and checked as
TensorFlow parses them ("/cpu:0", "/gpu:1", "/device:GPU:0", "/job:localhost/replica:0/
task:0/device:CPU:0", "GPU:0"); with soft placement (TensorFlow's default) a device that
does not exist here, a GPU for instance, runs on CPU:0, so programs written for a GPU run
unchanged. With `tf.config.set_soft_device_placement(False)` naming a missing device is an
InvalidArgumentError. `tf.config.set_logical_device_configuration` splits the CPU into
virtual devices ("/device:CPU:0", "/device:CPU:1", ...) that strategies can place replicas
on.

Example:
    >>> with tf.device("/gpu:0"):       # soft placement: runs on the CPU
    ...     x = tf.constant(1.0) + 1
    >>> tf.config.list_logical_devices("CPU")
    [LogicalDevice(name='/device:CPU:0', device_type='CPU')]
"""
import contextlib
import re
import threading

from tensorlite.framework import errors

_SPEC = re.compile(
    r"^(?:/job:(?P<job>[A-Za-z0-9_-]+))?(?:/replica:(?P<replica>\d+))?(?:/task:(?P<task>\d+))?"
    r"(?:/?(?:device:)?(?P<type>[A-Za-z_]+)(?::(?P<index>\d+|\*))?)?$")
_STATE = {"soft": True, "logical_cpus": None}  # None: one CPU device
_LOCAL = threading.local()


class DeviceSpec:
    """`tf.DeviceSpec`: a parsed device name (job, replica, task, device type, index)."""

    def __init__(self, job=None, replica=None, task=None, device_type=None,
                 device_index=None):
        self.job, self.replica, self.task = job, replica, task
        self.device_type = device_type.upper() if device_type else None
        self.device_index = device_index

    @classmethod
    def from_string(cls, spec):
        """Parses "/job:w/replica:0/task:1/device:GPU:0", "/cpu:0", "GPU" ..."""
        if not isinstance(spec, str):
            raise TypeError(f"A device name must be a string, got {type(spec).__name__}")
        m = _SPEC.match(spec.strip())
        if m is None or (spec.strip() and not any(m.groupdict().values())):
            raise ValueError(f"Unknown attribute or malformed device name {spec!r}; write "
                             f"e.g. '/cpu:0', '/gpu:0' or '/job:localhost/replica:0/task:0/"
                             f"device:CPU:0'")
        d = m.groupdict()
        index = d["index"]
        return cls(d["job"], None if d["replica"] is None else int(d["replica"]),
                   None if d["task"] is None else int(d["task"]), d["type"],
                   None if index in (None, "*") else int(index))

    def to_string(self):
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    def __repr__(self):
        return f"DeviceSpec({self.to_string()!r})"


class PhysicalDevice:
    def __init__(self, name, device_type):
        self.name, self.device_type = name, device_type

    def __repr__(self):
        return f"PhysicalDevice(name='{self.name}', device_type='{self.device_type}')"

    def __eq__(self, other):
        return isinstance(other, PhysicalDevice) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class LogicalDevice:
    def __init__(self, name, device_type):
        self.name, self.device_type = name, device_type

    def __repr__(self):
        return f"LogicalDevice(name='{self.name}', device_type='{self.device_type}')"


class LogicalDeviceConfiguration:
    """`tf.config.LogicalDeviceConfiguration`: one virtual device (memory_limit is
    accepted and ignored: NumPy has no per-device memory)."""

    def __init__(self, memory_limit=None, experimental_priority=None,
                 experimental_device_ordinal=None):
        self.memory_limit = memory_limit


_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")


def list_physical_devices(device_type=None):
    """The machine's devices: one CPU (tensorlite computes through NumPy)."""
    return [_CPU] if device_type is None or device_type.upper() == "CPU" else []


def list_logical_devices(device_type=None):
    """The CPU's logical devices (several after set_logical_device_configuration)."""
    if device_type is not None and device_type.upper() != "CPU":
        return []
    n = len(_STATE["logical_cpus"] or [None])
    return [LogicalDevice(f"/device:CPU:{i}", "CPU") for i in range(n)]


def set_logical_device_configuration(device, logical_devices):
    """Splits the CPU into len(logical_devices) virtual devices.

    >>> cpu = tf.config.list_physical_devices("CPU")[0]
    >>> tf.config.set_logical_device_configuration(
    ...     cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    """
    if not isinstance(device, PhysicalDevice) or device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}; pass one of "
                         f"tf.config.list_physical_devices() ({list_physical_devices()})")
    if logical_devices is not None:
        logical_devices = list(logical_devices)
        if not logical_devices or not all(isinstance(c, LogicalDeviceConfiguration)
                                          for c in logical_devices):
            raise ValueError("logical_devices must be a non-empty list of "
                             "tf.config.LogicalDeviceConfiguration")
    _STATE["logical_cpus"] = logical_devices


def get_logical_device_configuration(device):
    return None if _STATE["logical_cpus"] is None else list(_STATE["logical_cpus"])


def set_soft_device_placement(enabled):
    _STATE["soft"] = bool(enabled)


def get_soft_device_placement():
    return _STATE["soft"]


def _exists(spec):
    if spec.device_type is None:
        return True
    if spec.device_type != "CPU":
        return False
    return spec.device_index is None or spec.device_index < len(list_logical_devices())


@contextlib.contextmanager
def device(device_name):
    """`tf.device`: places the ops of the block on a device (checked; soft placement runs
    a missing device's ops on the CPU). None clears the placement."""
    spec = None
    if device_name is not None:
        if callable(device_name):
            raise RuntimeError("tf.device does not support functions when eager execution "
                               "is enabled.")
        spec = DeviceSpec.from_string(getattr(device_name, "name", device_name))
        if not _exists(spec) and not _STATE["soft"]:
            raise errors.InvalidArgumentError(
                None, None, f"Could not satisfy device specification {device_name!r}: this "
                f"machine has {[d.name for d in list_logical_devices()]}. Enable soft "
                f"placement (tf.config.set_soft_device_placement(True), the default) to run "
                f"on the CPU")
    stack = _LOCAL.__dict__.setdefault("stack", [])
    stack.append(spec)
    try:
        yield spec
    finally:
        stack.pop()


def current_device():
    """The device named by the innermost tf.device block ("" outside any)."""
    stack = getattr(_LOCAL, "stack", None)
    return stack[-1].to_string() if stack and stack[-1] is not None else ""
