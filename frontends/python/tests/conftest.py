import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_terminal_summary(terminalreporter):
    """The dtype checks' counts (test_dtypes_vs_torch.py): how many compared values with torch
    and how many met a torch refusal that dtype_ref.TORCH_REJECTS expects."""
    dref = sys.modules.get("dtype_ref")
    if dref is not None and sum(dref.TALLY.values()):
        terminalreporter.write_line("dtypes vs torch: " + dref.tally_line())
