import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from helpers import cpu_missing  # noqa: E402 - after the path that finds it


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_cpu: the test uses the cpu device (cpu_clang)")


def pytest_collection_modifyitems(config, items):
    """Tests that need the cpu device (marked needs_cpu, or using on_cpu) skip, with the load
    report's reason, where it is not installed."""
    why = cpu_missing()
    if not why:
        return
    for item in items:
        if item.get_closest_marker("needs_cpu") or "on_cpu" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(reason=why))


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
