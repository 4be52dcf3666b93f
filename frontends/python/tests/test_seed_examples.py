"""The seed's Quick Start, Autograd, Devices and Training Example, run verbatim, with their
printed results checked against independently computed values."""
import re

import numpy as np
import pytest
from helpers import cpu_missing

from polygrad import Tensor

QUICK_START = '''
from polygrad import Tensor

# Create tensors
a = Tensor.rand(3, 4)
b = Tensor.rand(4, 5)

# Matrix multiply + softmax
c = (a @ b).softmax(-1)
print(c.numpy())

# Autograd
x = Tensor([1.0, 2.0, 3.0])
x.requires_grad = True
loss = (x * x).sum()
loss.backward()
print(x.grad.numpy())  # [2.0, 4.0, 6.0]
'''

TRAINING = '''
from polygrad import Tensor
from polygrad.nn import Linear, SGD, get_parameters

Tensor.manual_seed(42)
model = Linear(2, 1)
opt = SGD(get_parameters(model), lr=0.01)

for i in range(100):
    opt.zero_grad()
    x = Tensor([[1.0, 2.0], [3.0, 4.0]])
    target = Tensor([[5.0], [11.0]])
    loss = (model(x) - target).square().mean()
    loss.backward()
    opt.step()

print(f"loss: {loss.item():.4f}")
'''

DEVICES = '''
from polygrad import Device, Tensor

x = Tensor.rand(4)

if Device.cuda_available():
    y = (x * 2).to('cuda')
    print(y.device)      # CUDA
    print(y.numpy())     # executes on CUDA, returns host numpy array
else:
    y = (x * 2).to('cpu')
    print(y.device)      # CPU
'''

AUTOGRAD = '''
x = Tensor([1.0, 2.0])
x.requires_grad = True
loss = (x * x).sum()
loss.backward()
print(x.grad.numpy())  # [2.0, 4.0]
'''


def _floats(text):
    return [float(v) for v in re.findall(r"-?\d+\.?\d*(?:e[-+]?\d+)?", text)]


def test_quick_start(capsys):
    ns = {}
    exec(QUICK_START, ns)
    out = capsys.readouterr().out
    a, b = ns["a"].numpy(), ns["b"].numpy()
    logits = a @ b
    e = np.exp(logits - logits.max(-1, keepdims=True))
    expected = e / e.sum(-1, keepdims=True)
    assert (a >= 0).all() and (a < 1).all()
    values = _floats(out)
    np.testing.assert_allclose(values[:15], expected.reshape(-1), rtol=1e-5, atol=1e-6)
    assert values[15:] == [2.0, 4.0, 6.0]


def test_autograd_example(capsys):
    exec(AUTOGRAD, {"Tensor": Tensor})
    assert _floats(capsys.readouterr().out) == [2.0, 4.0]


def test_devices_example(capsys):
    from polygrad import Device
    if not Device.cuda_available() and cpu_missing():  # the example moves to cpu then
        pytest.skip(cpu_missing())
    exec(DEVICES, {})
    out = capsys.readouterr().out.split("\n")
    assert out[0] == ("CUDA" if Device.cuda_available() else "CPU")


def test_training_example(capsys):
    exec(TRAINING, {})
    out = capsys.readouterr().out.strip()
    # The same 100 SGD steps in numpy from the same initial weights.
    from polygrad.nn import Linear
    Tensor.manual_seed(42)
    m = Linear(2, 1)
    w, b = m.weight.numpy().astype(np.float64), m.bias.numpy().astype(np.float64)
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    t = np.array([[5.0], [11.0]])
    for _ in range(100):
        y = x @ w.T + b
        loss = ((y - t) ** 2).mean()
        dy = 2 * (y - t) / y.size
        w, b = w - 0.01 * (dy.T @ x), b - 0.01 * dy.sum(0)
    assert out == f"loss: {loss:.4f}"
    assert loss < 1.0  # it trained (the initial loss is tens)


COMPILED_STEP = '''
import numpy as np
from polygrad import Tensor
from polygrad.nn import Linear, SGD, get_parameters, compile_step

Tensor.manual_seed(42)
model = Linear(4, 1)
opt = SGD(get_parameters(model), lr=0.01)

# Sample inputs (shapes must match at runtime)
x = Tensor.rand(8, 4)
y = Tensor.rand(8, 1)

def train_step(model, opt, x, y):
    loss = (model(x) - y).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss

# Compile: traces forward + backward + optimizer into one PolyStep
step = compile_step(train_step, model, opt, x, y)

# Run: executes compiled kernels with current buffer data
rng = np.random.default_rng(0)
for i in range(100):
    x._data[:] = rng.random((8, 4))  # update input data in-place
    y._data[:] = x._data.sum(1, keepdims=True) * 0.5
    step.run()
    print(f"step {i}: loss = {step.loss_value():.4f}")
'''


def test_compiled_training_step_example(capsys, on_cpu):
    ns = {}
    exec(COMPILED_STEP, ns)
    lines = capsys.readouterr().out.strip().split("\n")
    assert len(lines) == 100 and ns["step"].kernel_count >= 2
    # The same 100 SGD steps in numpy from the same initial weights and data.
    from polygrad.nn import Linear
    Tensor.manual_seed(42)
    m = Linear(4, 1)
    w, b = m.weight.numpy().astype(np.float64), m.bias.numpy().astype(np.float64)
    rng = np.random.default_rng(0)
    for i in range(100):
        x = rng.random((8, 4)).astype(np.float32).astype(np.float64)
        t = x.sum(1, keepdims=True) * 0.5
        y = x @ w.T + b
        loss = ((y - t) ** 2).mean()
        dy = 2 * (y - t) / y.size
        w, b = w - 0.01 * (dy.T @ x), b - 0.01 * dy.sum(0)
        assert lines[i] == f"step {i}: loss = {loss:.4f}", (i, lines[i], loss)
    np.testing.assert_allclose(ns["model"].weight.numpy(), w, rtol=1e-5)
