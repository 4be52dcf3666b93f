"""polygrad.capture and nn.compile_step: replays match eager steps and torch, inputs written
through Tensor._data are read on each run, random draws are fresh on each run, and misuse
raises with the core's message."""
import numpy as np
import pytest
import torch

from polygrad import PolygradValueError, Tensor, TinyJit, capture, nn


def test_data_is_the_tensors_memory(on_cpu):
    t = Tensor.rand(3, 4)
    before = t.numpy()
    d = t._data
    assert isinstance(d, np.ndarray) and d.shape == (3, 4) and d.dtype == np.float32
    np.testing.assert_array_equal(d, before)
    d[1, 2] = 42.0
    assert t.numpy()[1, 2] == 42.0 and (t * 2).numpy()[1, 2] == 84.0
    assert t._data is d
    raw = np.zeros(16 + 16, np.float32)  # a 64-byte aligned ndarray is used in place ...
    start = (-raw.ctypes.data % 64) // 4
    a = raw[start:start + 16]
    s = Tensor(a)
    assert s._data is a  # ... so it is the tensor's _data
    a[3] = 7
    assert s.numpy()[3] == 7


def test_compile_step_adam_mlp_matches_torch(on_cpu):
    rng = np.random.default_rng(1)
    l1, l2 = nn.Linear(6, 5), nn.Linear(5, 3)
    t1, t2 = torch.nn.Linear(6, 5), torch.nn.Linear(5, 3)
    for m, tm in ((l1, t1), (l2, t2)):
        tm.weight.data = torch.tensor(m.weight.numpy())
        tm.bias.data = torch.tensor(m.bias.numpy())
    opt = nn.Adam(nn.get_parameters([l1, l2]), lr=0.05)
    topt = torch.optim.Adam(list(t1.parameters()) + list(t2.parameters()), lr=0.05)
    x, y = Tensor.zeros(7, 6).contiguous().realize(), Tensor.zeros(7, dtype="int32").contiguous().realize()

    def train_step(x, y):
        loss = l2(l1(x).relu()).cross_entropy(y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    step = nn.compile_step(train_step, x, y)
    np.testing.assert_array_equal(l1.weight.numpy(), t1.weight.detach().numpy())  # nothing ran
    with pytest.raises(RuntimeError, match="before the first run"):
        step.loss_value()
    for i in range(6):
        xb = rng.normal(size=(7, 6)).astype(np.float32)
        yb = rng.integers(0, 3, 7).astype(np.int32)
        x._data[:] = xb
        y._data[:] = yb
        step.run()
        tl = torch.nn.functional.cross_entropy(t2(t1(torch.tensor(xb)).relu()),
                                               torch.tensor(yb).long())
        topt.zero_grad()
        tl.backward()
        topt.step()
        assert step.loss_value() == pytest.approx(tl.item(), rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(l1.weight.numpy(), t1.weight.detach().numpy(), rtol=1e-4,
                               atol=1e-6)
    np.testing.assert_allclose(l2.bias.numpy(), t2.bias.detach().numpy(), rtol=1e-4, atol=1e-6)


def test_random_draws_are_fresh_on_each_run():
    ones = Tensor.ones(4000).contiguous().realize()
    with Tensor.train():
        c = capture(lambda: nn.Dropout(0.5)(ones))
    masks = []
    for _ in range(2):
        out = c.run().numpy()
        assert set(np.unique(out)) <= {0.0, 2.0} and 0.45 < (out == 0).mean() < 0.55
        masks.append(out)
    assert (masks[0] != masks[1]).any()


def test_reading_values_while_capturing_raises_and_closes_the_capture():
    a = Tensor([1.0, 2.0])
    with pytest.raises(PolygradValueError, match="while capturing"):
        capture(lambda: (a * 2).numpy())
    np.testing.assert_array_equal((a * 2).numpy(), [2.0, 4.0])  # runs eagerly again
    c = capture(lambda: a * 3)
    assert c.kernel_count == 1
    np.testing.assert_array_equal(c.run().numpy(), [3.0, 6.0])


def test_stale_gradients_are_refused():
    w = Tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    opt = nn.SGD([w], lr=0.1)
    x = Tensor([1.0, 1.0])

    def step(x):
        (w * x).sum().backward()
        opt.step()

    with pytest.raises(PolygradValueError, match="before the capture began"):
        nn.compile_step(step, x)
    opt.zero_grad()
    s = nn.compile_step(step, x)
    s.run()
    s.run()
    np.testing.assert_allclose(w.numpy(), [0.8, 1.8], rtol=1e-6)


def test_tinyjit_trains_like_torch_and_takes_new_inputs():
    from polygrad import TinyJit
    rng = np.random.default_rng(4)
    lin = nn.Linear(5, 2)
    tlin = torch.nn.Linear(5, 2)
    tlin.weight.data = torch.tensor(lin.weight.numpy())
    tlin.bias.data = torch.tensor(lin.bias.numpy())
    opt = nn.SGD([lin.weight, lin.bias], lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tlin.parameters(), lr=0.1, momentum=0.9)
    calls = []

    @TinyJit
    def step(x, y):
        calls.append(1)  # Python runs on the eager call and the capturing call only
        loss = (lin(x) - y).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    for i in range(6):
        rows = 4 if i < 5 else 3  # a new batch size: eager again, then its own capture
        xb = rng.normal(size=(rows, 5)).astype(np.float32)
        yb = rng.normal(size=(rows, 2)).astype(np.float32)
        loss = step(Tensor(xb), Tensor(yb))
        tl = ((tlin(torch.tensor(xb)) - torch.tensor(yb)) ** 2).mean()
        topt.zero_grad()
        tl.backward()
        topt.step()
        assert loss.item() == pytest.approx(tl.item(), rel=1e-5, abs=1e-6), i
    assert len(calls) == 3  # rows 4: eager + capture; rows 3: eager
    np.testing.assert_allclose(lin.weight.numpy(), tlin.weight.detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_captured_run_with_replacements_checks_them():
    x = Tensor([1.0, 2.0]).realize()
    c = capture(lambda: x * 10)
    np.testing.assert_array_equal(c.run([x], [Tensor([3.0, 4.0])]).numpy(), [30.0, 40.0])
    np.testing.assert_array_equal(c.run().numpy(), [10.0, 20.0])
    with pytest.raises(PolygradValueError, match="shape"):
        c.run([x], [Tensor([1.0, 2.0, 3.0])])


def test_tinyjit_returning_its_input_or_a_view_of_it_follows_new_inputs():
    from polygrad import TinyJit
    same = TinyJit(lambda x: x)
    view = TinyJit(lambda x: x.reshape(3, 2))
    both = TinyJit(lambda x: {"x": x, "sum": x.sum()})
    for i in range(4):  # eager, capture, then two runs of the capture with new inputs
        xv = np.arange(6, dtype=np.float32) * (i + 1)
        x = Tensor(xv)
        np.testing.assert_array_equal(same(x).numpy(), xv, err_msg=str(i))
        np.testing.assert_array_equal(view(x).numpy(), xv.reshape(3, 2), err_msg=str(i))
        out = both(x)
        np.testing.assert_array_equal(out["x"].numpy(), xv, err_msg=str(i))
        assert out["sum"].item() == xv.sum(), i


def test_an_eager_step_after_a_capture_runs_the_captured_kernels():
    """A capture compiles each kernel for its sizes where an eager realize ran a kernel general
    over a size (their sums may round differently); the eager step after it runs the same
    programs as the replay, bit for bit, as bench/models.py checks. (Schedules kept the
    general kernel they had prepared, and the LSTM's gradients differed in their last bits.)"""
    rng = np.random.default_rng(3)
    w = {k: Tensor(rng.uniform(-0.1, 0.1, s).astype(np.float32), requires_grad=True)
         for k, s in (("wx", (32, 256)), ("wh", (64, 256)), ("b", (256,)), ("wo", (64, 8)))}
    x = Tensor(rng.uniform(-1, 1, (16, 12, 32)).astype(np.float32))

    def step():
        h = c = None
        for t in range(12):
            z = x[:, t] @ w["wx"] + w["b"]
            if h is not None:
                z = z + h @ w["wh"]
            i, f, g, o = z.chunk(4, dim=-1)
            i, f, o, g = i.sigmoid(), f.sigmoid(), o.sigmoid(), g.tanh()
            c = i * g if c is None else f * c + i * g
            h = o * c.tanh()
        loss = ((h @ w["wo"]) ** 2).mean()
        loss.backward()
        out = [loss] + [p.grad for p in w.values()]
        Tensor.realize_all(out)
        for p in w.values():
            p.grad = None
        return out

    step()
    jit = TinyJit(step)
    for _ in range(3):
        replayed = [t.numpy() for t in jit()]
    for want, got in zip(replayed, step()):
        np.testing.assert_array_equal(got.numpy(), want)
