"""The panel cache: a weight's copy in a matmul's panels is made once per version of the weight
and reused until the weight is assigned to (docs/compiler.md, "The panel cache").

A product `x @ w.T` with 64 or more rows and a weight larger than half an L2 reads the weight
from a copy in panels of its rows; the counters come from polygrad.panel_cache_stats()."""
import gc

import numpy as np
import pytest
import torch

import polygrad
from polygrad import Tensor
from polygrad import nn
from polygrad._host_data import _aligned_empty

RNG = np.random.default_rng(7)

# Panels are the cpu strategy's plan (a device with groups tiles instead), and the host-memory
# case needs a device whose memory the host can view: every test here runs on the cpu, also in
# the suite's runs on emu and wasm.
pytestmark = pytest.mark.usefixtures("on_cpu")


def _made():
    return polygrad.panel_cache_stats()["copies_made"]


def _weight(rows, cols):
    # A buffer of polygrad's own: a tensor over a numpy array's memory (the caller may write
    # the array behind polygrad's back) is never kept in the cache.
    w = Tensor.randn(rows, cols) * 0.05
    return w.realize()


def test_copy_made_once_and_reused():
    w = _weight(3072, 768)
    x = Tensor(RNG.standard_normal((64, 768)).astype(np.float32))
    before = polygrad.panel_cache_stats()
    first = (x @ w.T).numpy()
    after_first = polygrad.panel_cache_stats()
    second = (x @ w.T).numpy()
    after_second = polygrad.panel_cache_stats()
    ref = x.numpy() @ w.numpy().T
    np.testing.assert_allclose(first, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(second, ref, rtol=1e-4, atol=1e-4)
    assert after_first["copies_made"] == before["copies_made"] + 1
    assert after_second["copies_made"] == after_first["copies_made"]
    assert after_second["reuses"] == after_first["reuses"] + 1
    assert after_second["bytes"] >= after_first["bytes"] >= 3072 * 768 * 4


def test_assign_makes_one_new_copy_per_step():
    w = _weight(3072, 768)
    wn = w.numpy()
    xs = [RNG.standard_normal((64, 768)).astype(np.float32) for _ in range(3)]
    x1, x2, x3 = (Tensor(a) for a in xs)
    for step in range(3):
        start = _made()
        y1, y2 = x1 @ w.T, x2 @ w.T  # two products of one weight in one realize
        Tensor.realize(y1, y2)
        y3 = (x3 @ w.T).numpy()  # and one more in another
        assert _made() == start + 1, f"step {step}"
        np.testing.assert_allclose(y1.numpy(), xs[0] @ wn.T, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(y2.numpy(), xs[1] @ wn.T, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(y3, xs[2] @ wn.T, rtol=1e-4, atol=1e-4)
        w.assign(w * 0.5 + 0.01).realize()
        wn = wn * 0.5 + 0.01


def test_sgd_steps_make_one_copy_each():
    # x needs no gradient, so the weight is read in one layout only (x @ w.T); its gradient's
    # product reads activations, which are made anew every step.
    torch.manual_seed(0)
    ref = torch.nn.Linear(768, 3072)
    lin = nn.Linear(768, 3072)
    lin.weight = Tensor(ref.weight.detach().numpy().copy(), requires_grad=True)
    lin.weight = (lin.weight * 1).realize()  # polygrad's own memory (see _weight)
    lin.weight.requires_grad = True
    lin.bias = Tensor(ref.bias.detach().numpy().copy(), requires_grad=True)
    opt = nn.optim.SGD([lin.weight, lin.bias], lr=0.1)
    topt = torch.optim.SGD(ref.parameters(), lr=0.1)
    xs = RNG.standard_normal((4, 64, 768)).astype(np.float32)
    made = []
    for step in range(4):
        start = _made()
        opt.zero_grad()
        loss = (lin(Tensor(xs[step])) ** 2).mean()
        loss.backward()
        opt.step()
        made.append(_made() - start)
        topt.zero_grad()
        tloss = (ref(torch.from_numpy(xs[step])) ** 2).mean()
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-4)
    np.testing.assert_allclose(lin.weight.numpy(), ref.weight.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    assert made == [1, 1, 1, 1]


def test_copies_of_freed_weights_are_dropped():
    x = Tensor(RNG.standard_normal((64, 768)).astype(np.float32))
    w = _weight(3072, 768)
    (x @ w.T).realize()
    held = polygrad.panel_cache_stats()
    del w
    gc.collect()
    now = polygrad.panel_cache_stats()
    assert now["entries"] == held["entries"] - 1
    assert now["bytes"] <= held["bytes"] - 3072 * 768 * 4


def test_limit_bounds_the_memory():
    x = Tensor(RNG.standard_normal((64, 768)).astype(np.float32))
    w = _weight(3072, 768)
    limit = polygrad.panel_cache_stats()["limit"]
    try:
        polygrad.set_panel_cache_limit(1 << 20)  # below one copy (9 MiB): none kept
        assert polygrad.panel_cache_stats()["bytes"] <= 1 << 20
        start = _made()
        for _ in range(2):
            out = (x @ w.T).numpy()
            np.testing.assert_allclose(out, x.numpy() @ w.numpy().T, rtol=1e-4, atol=1e-4)
        assert _made() == start
    finally:
        polygrad.set_panel_cache_limit(limit)


def test_weights_used_in_turn_that_do_not_fit_keep_two_of_three():
    # Room for two copies, three weights used in turn: a copy that needs room displaces only
    # copies unused since it was last asked for, so two stay kept and are reused every round
    # and the third is made for each use (least-recently-used eviction alone dropped each copy
    # just before its next use: no reuse at all).
    x = Tensor(RNG.standard_normal((64, 768)).astype(np.float32))
    ws = [_weight(3072, 768) for _ in range(3)]
    limit = polygrad.panel_cache_stats()["limit"]
    try:
        polygrad.set_panel_cache_limit(0)  # empty, then room for two
        polygrad.set_panel_cache_limit(limit)
        (x @ ws[0].T).realize()
        one = polygrad.panel_cache_stats()["bytes"]
        assert one >= 3072 * 768 * 4
        polygrad.set_panel_cache_limit(2 * one + one // 2)
        for w in ws[1:]:
            (x @ w.T).realize()
        for _ in range(3):
            start = polygrad.panel_cache_stats()
            for w in ws:
                np.testing.assert_allclose((x @ w.T).numpy(), x.numpy() @ w.numpy().T,
                                           rtol=1e-4, atol=1e-4)
            now = polygrad.panel_cache_stats()
            assert now["reuses"] - start["reuses"] == 2
            assert now["entries"] == 2 and now["bytes"] <= 2 * one + one // 2
    finally:
        polygrad.set_panel_cache_limit(limit)


def test_host_memory_weight_is_not_kept():
    # A tensor over a numpy array's memory (64-byte aligned: the cpu device uses it in place)
    # sees writes to the array, so no copy of it may be kept.
    wn = _aligned_empty((3072, 768), np.float32)
    wn[:] = RNG.standard_normal((3072, 768)) * 0.05
    w = Tensor(wn)
    x = Tensor(RNG.standard_normal((64, 768)).astype(np.float32))
    xn = x.numpy()
    np.testing.assert_allclose((x @ w.T).numpy(), xn @ wn.T, rtol=1e-4, atol=1e-4)
    wn *= 2  # in place, behind polygrad's back
    np.testing.assert_allclose((x @ w.T).numpy(), xn @ wn.T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows", [1, 3, 64, 100])
def test_every_row_count_reads_the_kept_copy(rows):
    w = _weight(3072, 768)
    x = RNG.standard_normal((rows, 768)).astype(np.float32)
    for _ in range(2):
        out = (Tensor(x) @ w.T).numpy()
        np.testing.assert_allclose(out, x @ w.numpy().T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [5017, 1023, 1025])
def test_columns_no_vector_divides_read_partial_panels(n):
    # 5017 and 1023 weight rows in panels of the tail plan's column block (32 with AVX-512), the
    # last panel partial (its moved-back last vector lies within it); 1025's does not, and b is
    # transposed whole.
    w = _weight(n, 768)
    wn = w.numpy()
    start = _made()
    for rows in (64, 100, 64):
        x = RNG.standard_normal((rows, 768)).astype(np.float32)
        out = (Tensor(x) @ w.T).numpy()
        np.testing.assert_allclose(out, x @ wn.T, rtol=1e-4, atol=1e-4)
    assert _made() == start + 1


def test_capture_replays_count_their_writes():
    # A capture records the weight's update; each replay writes the weight, so the copy kept
    # from an eager product before is stale afterwards and is made again.
    w = _weight(3072, 768)
    xn = RNG.standard_normal((64, 768)).astype(np.float32)
    x = Tensor(xn)
    wn = w.numpy()
    np.testing.assert_allclose((x @ w.T).numpy(), xn @ wn.T, rtol=1e-4, atol=1e-4)

    def update():
        w.assign(w * 0.5 + 0.01)
        return w

    rec = polygrad.capture(update)  # (recording runs nothing)
    for _ in range(3):
        rec.run()
        wn = wn * 0.5 + 0.01
        start = _made()
        np.testing.assert_allclose((x @ w.T).numpy(), xn @ wn.T, rtol=1e-4, atol=1e-4)
        assert _made() == start + 1
