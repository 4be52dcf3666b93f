"""polygrad.Device: the plugin registry as the C API exposes it (pg_device_*, pg_plugin_*)."""
from ._ffi import DTYPE_NAMES, byref, c_char_p, c_uint32, c_uint64, check, lib

PG_CAP_HOST_MEMORY = 1 << 3  # plugin.h's pg_capability_flags
_HOST_MEMORY = {}  # device name -> whether its buffers are host memory


def _string(f, *args):
    out = c_char_p()
    check(f(*args, byref(out)))
    return out.value.decode()


def canonical_device_arg(device):
    """'CPU', 'cuda:1', 'CUDA' -> the core's spelling ('cpu', 'cuda:1', 'cuda')."""
    return str(device).lower()


def device_display(name):
    """'cpu:0' -> 'CPU', 'cuda:1' -> 'CUDA:1'."""
    prefix, _, index = name.partition(":")
    return prefix.upper() if index in ("", "0") else f"{prefix.upper()}:{index}"


class _DeviceMeta(type):
    @property
    def DEFAULT(cls):
        """The default device: POLYGRAD_DEVICE, else the config file's default_device, else
        'CPU'."""
        return device_display(_string(lib.pg_device_default))


class Device(metaclass=_DeviceMeta):
    """The devices of the loaded plugins."""

    @staticmethod
    def list():
        """Canonical names of the usable devices, e.g. ['cpu:0']."""
        return [d for d in _string(lib.pg_device_list).split("\n") if d]

    @staticmethod
    def cuda_available():
        return any(d.startswith("cuda") for d in Device.list())

    @staticmethod
    def canonical(name):
        """The canonical name of a device ('cpu' -> 'cpu:0'); raises when there is none."""
        return _string(lib.pg_device_canonical, canonical_device_arg(name).encode())

    @staticmethod
    def flags(name=""):
        """The device's capability flags (plugin.h's PG_CAP_*; "" the default device)."""
        out = c_uint32()
        check(lib.pg_device_flags(canonical_device_arg(name).encode(), byref(out)))
        return out.value

    @staticmethod
    def dtypes(name=""):
        """The names of the dtypes the device declares, in the core's order ("" the default
        device); a kernel on any other dtype is refused on it."""
        out = c_uint64()
        check(lib.pg_device_dtypes(canonical_device_arg(name).encode(), byref(out)))
        return [n for i, n in enumerate(DTYPE_NAMES) if out.value >> i & 1]

    @staticmethod
    def host_memory(name=""):
        """Whether the device's buffers live in host memory (PG_CAP_HOST_MEMORY): reading one
        back is a copy, with no device to wait for."""
        if not name:  # the default device: it may change (POLYGRAD_DEVICE)
            return bool(Device.flags() & PG_CAP_HOST_MEMORY)
        # (a named device's flags never change: asked once, on every realised index checked)
        if name not in _HOST_MEMORY:
            _HOST_MEMORY[name] = bool(Device.flags(name) & PG_CAP_HOST_MEMORY)
        return _HOST_MEMORY[name]

    @staticmethod
    def load(name_or_path):
        """Loads a plugin by name ('cpu_clang') or path; returns its plugin name. Raises
        PolygradDeviceError with the load report's reason when it is refused."""
        return _string(lib.pg_plugin_load, str(name_or_path).encode())

    @staticmethod
    def report(json=False):
        """Every plugin load attempt so far, one line each (or the JSON report)."""
        return _string(lib.pg_plugin_report, 1 if json else 0)
