"""`tf.data.experimental.prefetch_to_device` and `copy_to_device` on a CPU-only system.

tensorlite computes on the CPU, so elements are already where any existing device would
want them: copying to "/cpu:0" (or another logical CPU device) is the identity, and
`prefetch_to_device` is `prefetch(buffer_size)`. A device that does not exist here (a GPU,
a TPU, a CPU index beyond tf.config.list_logical_devices("CPU")) raises
InvalidArgumentError naming it — never silent placement on the CPU, since a program that
asks for a device transfer expects the device to exist.

Example:
    >>> ds = tf.data.Dataset.range(4).apply(
    ...     tf.data.experimental.prefetch_to_device("/cpu:0"))
"""
from tensorlite.data.dataset import AUTOTUNE
from tensorlite.framework import errors
from tensorlite.framework.device import DeviceSpec, _exists, list_logical_devices


def _check_device(device, what):
    try:
        spec = DeviceSpec.from_string(device if isinstance(device, str) else
                                      device.decode() if isinstance(device, bytes) else device)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(None, None, f"{what}: {e}") from None
    if spec.device_type is None or not _exists(spec) or spec.job not in (None, "localhost") \
            or spec.replica not in (None, 0) or spec.task not in (None, 0):
        names = [d.name for d in list_logical_devices()]
        raise errors.InvalidArgumentError(
            None, None, f"{what}: device {device!r} does not exist; this system's devices are "
            f"{names} (tensorlite computes on the CPU)")
    return spec


def prefetch_to_device(device, buffer_size=None):
    """For `dataset.apply`: prefetches `buffer_size` elements (None: AUTOTUNE) for
    `device`, which must be a CPU device of this system."""
    _check_device(device, "prefetch_to_device")
    size = AUTOTUNE if buffer_size is None else buffer_size
    return lambda dataset: dataset.prefetch(size)


def copy_to_device(target_device, source_device="/cpu:0"):
    """For `dataset.apply`: the dataset unchanged, its elements being on the CPU already;
    both devices must be CPU devices of this system."""
    _check_device(source_device, "copy_to_device source_device")
    _check_device(target_device, "copy_to_device target_device")
    return lambda dataset: dataset
