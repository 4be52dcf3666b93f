"""Symbolic sizes (polygrad.Variable): a graph over a bound variable compiles once and runs at
every value. Values against numpy."""
import numpy as np
import pytest

import polygrad as pg
from polygrad import Tensor, Variable


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_kv_cache_decoding_compiles_once():
    rng = np.random.default_rng(0)
    max_len, d = 32, 8
    kc = rng.standard_normal((max_len, d)).astype(np.float32)
    vc = rng.standard_normal((max_len, d)).astype(np.float32)
    q = rng.standard_normal((1, d)).astype(np.float32)
    K, V, Q = Tensor(kc), Tensor(vc), Tensor(q)
    start_pos = Variable("start_pos", 1, max_len)
    first = None
    for p in (3, 4, 5, 9, 1, 20, 32):
        n = start_pos.bind(p)
        k = K.shrink(((0, n), None))
        v = V[:n]  # (a slice with a bound variable is the same shrink)
        assert k.shape == (p, d) and v.shape == (p, d)
        out = ((Q @ k.T) * (1 / np.sqrt(d))).softmax(-1) @ v
        want = _softmax(q @ kc[:p].T / np.sqrt(d)) @ vc[:p]
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
        if first is None:
            first = pg.compiled_kernel_count()
    assert pg.compiled_kernel_count() == first, "a new position compiled a kernel"


def test_reshape_and_mean_over_a_variable():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((24, 4)).astype(np.float32)
    X = Tensor(data)
    rows = Variable("rows", 1, 24)
    first = None
    for r in (6, 10, 3, 24, 13):
        n = rows.bind(r)
        x = X[:n].reshape(n, 2, 2)
        m = (x * 2).mean(0)
        np.testing.assert_allclose(m.numpy(), (data[:r] * 2).reshape(r, 2, 2).mean(0),
                                   rtol=1e-5, atol=1e-6)
        if first is None:
            first = pg.compiled_kernel_count()
    assert pg.compiled_kernel_count() == first


def test_graph_with_a_size_worked_out_as_an_int_runs_per_value():
    # The (r, 4) input's size is the bound value as an int: at a probe value the graph's shapes
    # disagree, so it is scheduled for each value it is bound to (and still right).
    data = np.arange(96, dtype=np.float32).reshape(24, 4)
    X = Tensor(data)
    rows = Variable("rows", 1, 24)
    for r in (6, 10, 6):
        n = rows.bind(r)
        y = (X[:n] + Tensor(np.full((r, 4), 0.5, np.float32))).sum(0)
        np.testing.assert_allclose(y.numpy(), (data[:r] + 0.5).sum(0), rtol=1e-6)


def test_value_outside_the_bounds_names_the_variable():
    with pytest.raises(pg.PolygradValueError, match=r"start_pos.*9"):
        Variable("start_pos", 1, 8).bind(9)
    with pytest.raises(pg.PolygradValueError):
        Variable("n", 5, 2)
    with pytest.raises(pg.PolygradValueError):
        Variable("not a name", 1, 2)


def test_multi_head_cache_written_and_read_through_size_expressions():
    rng = np.random.default_rng(2)
    heads, max_len, d = 2, 16, 4
    kc = np.zeros((heads, max_len, d), np.float32)
    vc = np.zeros((heads, max_len, d), np.float32)
    K, V = Tensor(kc).realize(), Tensor(vc).realize()
    pos_var = Variable("pos", 0, max_len - 1)
    second = None
    for p in range(10):
        kr = rng.standard_normal((heads, 1, d)).astype(np.float32)
        vr = rng.standard_normal((heads, 1, d)).astype(np.float32)
        q = rng.standard_normal((heads, 1, d)).astype(np.float32)
        kc[:, p:p + 1], vc[:, p:p + 1] = kr, vr
        pos = pos_var.bind(p)
        at = (None, (pos, max_len - 1 - pos), None)
        Tensor.realize_all([K.assign(K + Tensor(kr).pad(at)), V.assign(V + Tensor(vr).pad(at))])
        n = pos + 1
        k, v = K[:, :n], V[:, :n]
        assert k.shape == (heads, p + 1, d)
        out = (Tensor(q) @ k.transpose(-1, -2) * 0.5).softmax(-1) @ v
        want = _softmax(q @ kc[:, :p + 1].transpose(0, 2, 1) * 0.5) @ vc[:, :p + 1]
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
        if p == 0:
            second = pg.compiled_kernel_count()
    assert pg.compiled_kernel_count() == second, "a new position compiled a kernel"


def test_inputs_of_each_length_viewed_over_a_variable_compile_once():
    rng = np.random.default_rng(3)
    seq = Variable("seq", 1, 64)
    first = None
    for t in (7, 3, 12, 40, 9, 64, 20):
        q, k, v = (rng.standard_normal((t, 8)).astype(np.float32) for _ in range(3))
        n = seq.bind(t)
        out = ((Tensor(q).reshape(n, 8) @ Tensor(k).reshape(n, 8).T) * 0.3).softmax(-1) \
            @ Tensor(v).reshape(n, 8)
        np.testing.assert_allclose(out.numpy(), _softmax(q @ k.T * 0.3) @ v, rtol=1e-5, atol=1e-5)
        if first is None:
            first = pg.compiled_kernel_count()
    assert pg.compiled_kernel_count() == first, "a new length compiled a kernel"


def test_row_written_through_a_view_at_a_bound_position_compiles_once():
    # (Tensor.assign through a view: test_assign_view.py)
    max_len, d = 24, 8
    a = np.zeros((max_len, d), np.float32)
    cache = Tensor(a.copy()).realize()  # (a copy: the tensor may share the array)
    pos = Variable("pos", 1, max_len)
    first = None
    for p in (3, 4, 5, 9, 17, 2, 24, 11, 8):
        n = pos.bind(p)
        row = np.random.default_rng(p).standard_normal((1, d)).astype(np.float32)
        cache.shrink(((n - 1, n), None)).assign(Tensor(row))
        a[p - 1:p] = row
        np.testing.assert_array_equal(cache.numpy(), a, err_msg=f"position {p}")
        if first is None:
            first = pg.compiled_kernel_count()
    assert pg.compiled_kernel_count() == first, "a new position compiled a kernel"
