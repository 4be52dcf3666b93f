"""Optimizers against torch's for several steps from the same initial weights."""
import numpy as np
import pytest
import torch

from polygrad import Tensor
from polygrad import nn

RNG = np.random.default_rng(0)
W1, B1 = RNG.normal(size=(8, 4)).astype(np.float32), RNG.normal(size=8).astype(np.float32)
W2, B2 = RNG.normal(size=(3, 8)).astype(np.float32), RNG.normal(size=3).astype(np.float32)
X = RNG.normal(size=(6, 4)).astype(np.float32)
Y = np.array([0, 2, 1, 1, 0, 2])


def _run(make_ours, make_theirs, steps=5, schedule=None):
    ps = [Tensor(a.copy(), requires_grad=True) for a in (W1, B1, W2, B2)]
    ts = [torch.tensor(a.copy(), requires_grad=True) for a in (W1, B1, W2, B2)]
    opt, topt = make_ours(ps), make_theirs(ts)
    x, y = Tensor(X), Tensor(Y, dtype="int32")
    xt, yt = torch.tensor(X), torch.tensor(Y)
    for step in range(steps):
        if schedule is not None:
            opt.lr = schedule(step)
            for group in topt.param_groups:
                group["lr"] = schedule(step)
        opt.zero_grad()
        loss = x.linear(ps[0], ps[1]).relu().linear(ps[2], ps[3]).cross_entropy(y)
        loss.backward()
        opt.step()
        topt.zero_grad()
        tl = torch.nn.functional.cross_entropy(
            torch.nn.functional.linear(torch.nn.functional.linear(xt, ts[0], ts[1]).relu(),
                                       ts[2], ts[3]), yt)
        tl.backward()
        topt.step()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-4, atol=1e-5)
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kw", [{}, {"momentum": 0.9}, {"momentum": 0.9, "weight_decay": 0.1},
                                {"weight_decay": 0.05}, {"momentum": 0.5, "nesterov": True}])
def test_sgd(kw):
    _run(lambda p: nn.SGD(p, lr=0.1, **kw), lambda p: torch.optim.SGD(p, lr=0.1, **kw))


@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.1}, {"betas": (0.8, 0.99), "eps": 1e-6}])
def test_adam(kw):
    _run(lambda p: nn.Adam(p, lr=0.01, **kw), lambda p: torch.optim.Adam(p, lr=0.01, **kw))


@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.2}])
def test_adamw(kw):
    _run(lambda p: nn.AdamW(p, lr=0.01, **kw), lambda p: torch.optim.AdamW(p, lr=0.01, **kw))


def test_state_advances_without_reading_the_loss_and_grads_keep_their_values():
    # Nothing read between steps (each step's graph is the same: the core must still run each
    # update once); p.grad after step() holds the gradient the step used, as torch's does.
    for make, tmake in [(lambda p: nn.Adam(p, lr=0.1), lambda p: torch.optim.Adam(p, lr=0.1)),
                        (lambda p: nn.SGD(p, lr=0.1, momentum=0.9),
                         lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9))]:
        w = Tensor(np.array([1.0, -2.0, 3.0], np.float32), requires_grad=True)
        tw = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        opt, topt = make([w]), tmake([tw])
        for _ in range(4):
            opt.zero_grad()
            (w * w * w).sum().backward()
            opt.step()
            topt.zero_grad()
            (tw * tw * tw).sum().backward()
            topt.step()
            np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_adam_counts_each_parameters_steps_and_float64_steps_exactly():
    # b gets its first gradient at step 3: its bias correction is step 1's (torch's count per
    # parameter); a float64 parameter moves by the lr given, not by it rounded to float32.
    a = Tensor(np.array([1.0, -1.0]), requires_grad=True)  # float64
    b = Tensor(np.array([1.0, -1.0]), requires_grad=True)
    ta = torch.tensor([1.0, -1.0], dtype=torch.float64, requires_grad=True)
    tb = torch.tensor([1.0, -1.0], dtype=torch.float64, requires_grad=True)
    opt, topt = nn.Adam([a, b], lr=0.1), torch.optim.Adam([ta, tb], lr=0.1)
    for step in range(3):
        opt.zero_grad()
        topt.zero_grad()
        ((a * a).sum() + ((b * b).sum() if step == 2 else 0)).backward()
        ((ta * ta).sum() + ((tb * tb).sum() if step == 2 else 0)).backward()
        opt.step()
        topt.step()
    np.testing.assert_allclose(a.numpy(), ta.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), tb.detach().numpy(), rtol=1e-12)


def test_defaults_match_seed():
    p = [Tensor.zeros(2)]
    s = nn.SGD(p)
    assert (s.lr, s.momentum, s.weight_decay) == (0.01, 0.0, 0.0)
    a = nn.Adam(p)
    assert (a.lr, a.b1, a.b2, a.eps, a.weight_decay) == (0.001, 0.9, 0.999, 1e-8, 0.0)
    w = nn.AdamW(p)
    assert (w.lr, w.b1, w.b2, w.eps, w.weight_decay) == (0.001, 0.9, 0.999, 1e-8, 0.01)
    assert p[0].requires_grad


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_new_batch_sizes_compile_nothing(name):
    """A training loop whose batches change size (a last partial batch) compiles its kernels
    once: the batch is a launch variable of the forward, backward and optimizer kernels. Values
    against torch."""
    import polygrad
    rng = np.random.default_rng(3)
    w = [rng.normal(size=s).astype(np.float32) * 0.3 for s in ((16, 20), (16,), (4, 16), (4,))]
    ps = [Tensor(a.copy(), requires_grad=True) for a in w]
    ts = [torch.tensor(a.copy(), requires_grad=True) for a in w]
    kw = {"lr": 0.05, "momentum": 0.9} if name == "SGD" else {"lr": 0.01}
    opt, topt = getattr(nn, name)(ps, **kw), getattr(torch.optim, name)(ts, **kw)
    compiled = None
    for batch in (32, 32, 20, 7, 50, 3):
        xn = rng.normal(size=(batch, 20)).astype(np.float32)
        yn = rng.integers(0, 4, batch).astype(np.int32)
        opt.zero_grad()
        loss = Tensor(xn).linear(ps[0], ps[1]).relu().linear(ps[2], ps[3]).cross_entropy(
            Tensor(yn))
        loss.backward()
        opt.step()
        topt.zero_grad()
        tl = torch.nn.functional.cross_entropy(
            torch.nn.functional.linear(
                torch.nn.functional.linear(torch.tensor(xn), ts[0], ts[1]).relu(), ts[2], ts[3]),
            torch.tensor(yn).long())
        tl.backward()
        topt.step()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-4, atol=1e-5)
        for p, t in zip(ps, ts):
            np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
        if batch == 32:
            compiled = polygrad.compiled_kernel_count()
    assert polygrad.compiled_kernel_count() == compiled


@pytest.mark.parametrize("name", ["SGD", "AdamW"])
def test_learning_rate_schedule(name):
    # opt.lr set before every step, as a schedule does (kept in a buffer the update reads).
    def schedule(step):
        return 0.1 / (1 + step)
    kw = {"momentum": 0.9} if name == "SGD" else {}
    _run(lambda p: getattr(nn, name)(p, lr=1.0, **kw),
         lambda p: getattr(torch.optim, name)(p, lr=1.0, **kw), steps=6, schedule=schedule)
    opt = nn.SGD([Tensor(W1.copy(), requires_grad=True)], lr=0.25)
    assert opt.lr == 0.25
    opt.lr = 0.5
    assert opt.lr == 0.5


def test_changing_the_learning_rate_compiles_nothing():
    from polygrad import compiled_kernel_count
    w = Tensor(W1.copy(), requires_grad=True)
    x = Tensor(X)
    opt = nn.SGD([w], lr=0.1, momentum=0.9)

    def step(lr):
        opt.lr = lr
        opt.zero_grad()
        (x.linear(w) ** 2).mean().backward()
        opt.step()
    step(0.1)
    step(0.05)
    before = compiled_kernel_count()
    for lr in (0.03, 0.02, 0.01):
        step(lr)
    assert compiled_kernel_count() == before
