"""`tf.config`: functions run eagerly or as graphs, graph optimizer switches, devices."""
from tensorlite.framework import blas_threads as _blas_threads
from tensorlite.framework import determinism as _determinism
from tensorlite.graph import function as _function
from tensorlite.graph import options as _options

run_functions_eagerly = _function.run_functions_eagerly
functions_run_eagerly = _function.functions_run_eagerly


from tensorlite.framework.device import (LogicalDevice, LogicalDeviceConfiguration,  # noqa: E402,F401
                                         PhysicalDevice, get_logical_device_configuration,
                                         get_soft_device_placement, list_logical_devices,
                                         list_physical_devices,
                                         set_logical_device_configuration,
                                         set_soft_device_placement)


class experimental:  # noqa: N801 - TensorFlow's namespace name
    """`tf.config.experimental`: the names programs call before training on a GPU."""
    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)
    set_virtual_device_configuration = staticmethod(set_logical_device_configuration)
    VirtualDeviceConfiguration = LogicalDeviceConfiguration

    @staticmethod
    def set_memory_growth(device, enable):
        """Accepted for the CPU (NumPy allocates as it goes)."""
        if not isinstance(device, PhysicalDevice):
            raise ValueError(f"Unrecognized device: {device!r}")

    @staticmethod
    def get_memory_growth(device):
        return True

    @staticmethod
    def enable_op_determinism():
        """Ops give the same outputs for the same inputs on every run on this machine
        (framework/determinism.py says what it changes, and its cost)."""
        _determinism.enable()


def set_visible_devices(devices, device_type=None):
    """Accepted: the one CPU is always visible (hiding GPUs changes nothing here)."""


def get_visible_devices(device_type=None):
    return list_physical_devices(device_type)


class optimizer:  # noqa: N801 - TensorFlow's namespace name
    set_experimental_options = staticmethod(_options.set_experimental_options)
    get_experimental_options = staticmethod(_options.get_experimental_options)

    @staticmethod
    def set_jit(enabled):
        """Compile every tf.function as with jit_compile=True (True/"autoclustering")."""
        _function._JIT_DEFAULT[0] = bool(enabled)

    @staticmethod
    def get_jit():
        return "autoclustering" if _function._JIT_DEFAULT[0] else ""


class threading:  # noqa: N801
    """Thread settings as TF's: 0 means the default (every core). The intra-op setting caps
    the BLAS threads one kernel uses (tensorlite.framework.blas_threads picks below it by
    measurement); ops run one at a time, so the inter-op setting is recorded only. Unlike
    TF, both may be changed after ops have run."""

    @staticmethod
    def get_inter_op_parallelism_threads():
        return _blas_threads.get_setting("inter")

    @staticmethod
    def set_inter_op_parallelism_threads(num_threads):
        _blas_threads.set_inter_op(num_threads)

    @staticmethod
    def get_intra_op_parallelism_threads():
        return _blas_threads.get_setting("intra")

    @staticmethod
    def set_intra_op_parallelism_threads(num_threads):
        _blas_threads.set_intra_op(num_threads)
