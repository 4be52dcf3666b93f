import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from helpers import cpu_missing  # noqa: E402 - after the path that finds it

from polygrad import Device  # noqa: E402
from polygrad._ffi import DTYPE_NAMES  # noqa: E402

# Cases whose result on the wasm device is wrong, by a known renderer bug: strict xfails (an
# XPASS fails the run), so each goes when its bug is fixed. node id -> the bug.
WASM_KNOWN_BUGS: dict[str, str] = {}


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_cpu: the test uses the cpu device (cpu_clang)")


def pytest_collection_modifyitems(config, items):
    """Tests that need the cpu device (marked needs_cpu, or using on_cpu) skip, with the load
    report's reason, where it is not installed. A case parametrised with the name of a dtype
    the default device does not declare (the wasm device has no float16 and bfloat16) skips,
    naming it. On the wasm device, WASM_KNOWN_BUGS are strict xfails."""
    why = cpu_missing()
    default = Device.canonical("")
    lacking = set(DTYPE_NAMES[1:]) - set(Device.dtypes())
    for item in items:
        if why and (item.get_closest_marker("needs_cpu")
                    or "on_cpu" in getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.skip(reason=why))
        spec = getattr(item, "callspec", None)
        named = {v for v in spec.params.values() if isinstance(v, str)} if spec else set()
        if named & lacking:
            item.add_marker(pytest.mark.skip(
                reason=f"{default} lacks {', '.join(sorted(named & lacking))}"))
        bug = WASM_KNOWN_BUGS.get(item.nodeid.split("/")[-1])
        if bug and default.startswith("wasm"):
            item.add_marker(pytest.mark.xfail(reason=f"wasm: {bug}", strict=True))


@pytest.fixture
def on_cpu(monkeypatch):
    """The cpu as the default device for one test: for the tests of what a device with host
    memory does (Tensor._data views, ndarrays used in place, index values checked eagerly),
    which the suite's run on the GPU-semantics emulator (POLYGRAD_DEVICE=emu, memory the host
    cannot view) would otherwise test on a device that has none of it."""
    monkeypatch.setenv("POLYGRAD_DEVICE", "cpu")


def pytest_terminal_summary(terminalreporter):
    """The dtype checks' counts (test_dtypes_vs_torch.py): how many compared values with torch
    and how many met a torch refusal that dtype_ref.TORCH_REJECTS expects."""
    dref = sys.modules.get("dtype_ref")
    if dref is not None and sum(dref.TALLY.values()):
        terminalreporter.write_line("dtypes vs torch: " + dref.tally_line())
