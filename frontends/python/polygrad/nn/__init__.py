"""polygrad.nn: layers, optimizers and state dicts, written with Tensor methods (each layer is
a composition of C API ops, as in tinygrad's nn)."""
import math
import weakref

from .. import _pending
from ..tensor import Tensor

# Tensors that hold state but are not trained (BatchNorm running statistics): optimizers skip
# them even when get_parameters lists them.
_buffers = weakref.WeakValueDictionary()  # id -> tensor


def _uniform(shape, bound):
    return Tensor.uniform(*shape, low=-bound, high=bound)


def _param(t):
    t.requires_grad = True
    return t


class Linear:
    """y = x @ W.T + b, W and b uniform in +-1/sqrt(in_features) (torch's default)."""

    def __init__(self, in_features, out_features, bias=True):
        bound = 1.0 / math.sqrt(in_features)
        self.weight = _param(_uniform((out_features, in_features), bound))
        self.bias = _param(_uniform((out_features,), bound)) if bias else None

    def __call__(self, x):
        return x.linear(self.weight, self.bias)


class LayerNorm:
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) axes."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        self.normalized_shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                                 else tuple(normalized_shape))
        self.axis = tuple(-1 - i for i in range(len(self.normalized_shape)))
        self.eps = eps
        self.weight = _param(Tensor.ones(*self.normalized_shape)) if elementwise_affine else None
        self.bias = _param(Tensor.zeros(*self.normalized_shape)) if elementwise_affine else None

    def __call__(self, x):
        y = x.layernorm(self.axis, self.eps)
        return y if self.weight is None else y * self.weight + self.bias


class RMSNorm:
    """x / sqrt(mean(x^2, -1) + eps) * weight."""

    def __init__(self, dim, eps=1e-5, elementwise_affine=True):
        self.eps = eps
        self.weight = _param(Tensor.ones(dim)) if elementwise_affine else None

    def __call__(self, x):
        y = x * (x.square().mean(-1, keepdim=True) + self.eps).rsqrt()
        return y if self.weight is None else y * self.weight


class Embedding:
    """Lookup table: weight[idx], weight standard normal (torch's default)."""

    def __init__(self, vocab_size, embed_size):
        self.vocab_size, self.embed_size = vocab_size, embed_size
        self.weight = _param(Tensor.randn(vocab_size, embed_size))

    def __call__(self, idx):
        if not isinstance(idx, Tensor):
            idx = self.weight._operand(idx, "int32")
        return self.weight[idx]


class Dropout:
    """Zeroes elements with probability p while Tensor.training is set."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, x):
        return x.dropout(self.p)


class GroupNorm:
    """Normalises each of num_groups channel groups of an (N, C, ...) tensor."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        if num_groups <= 0 or num_channels % num_groups != 0:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight = _param(Tensor.ones(num_channels)) if affine else None
        self.bias = _param(Tensor.zeros(num_channels)) if affine else None

    def __call__(self, x):
        shape = x.shape
        y = x.reshape(shape[0], self.num_groups, -1).layernorm(-1, self.eps).reshape(*shape)
        if self.weight is None:
            return y
        bshape = (1, self.num_channels) + (1,) * (len(shape) - 2)
        return y * self.weight.reshape(*bshape) + self.bias.reshape(*bshape)


class Conv2d:
    """NCHW 2-d convolution; weight and bias uniform in +-1/sqrt(fan_in) (torch's default)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True):
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        bound = 1.0 / math.sqrt(in_channels // groups * kh * kw)
        self.weight = _param(_uniform((out_channels, in_channels // groups, kh, kw), bound))
        self.bias = _param(_uniform((out_channels,), bound)) if bias else None

    def __call__(self, x):
        return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation,
                        self.padding)


class BatchNorm2d:
    """Batch normalisation over (N, H, W) per channel. While Tensor.training is set it uses the
    batch statistics and updates running_mean/running_var (momentum, unbiased variance, as
    torch); otherwise it uses the running statistics."""

    def __init__(self, num_features, eps=1e-5, affine=True, track_running_stats=True,
                 momentum=0.1):
        self.eps, self.momentum, self.track_running_stats = eps, momentum, track_running_stats
        self.weight = _param(Tensor.ones(num_features)) if affine else None
        self.bias = _param(Tensor.zeros(num_features)) if affine else None
        self.running_mean = Tensor.zeros(num_features).realize()
        self.running_var = Tensor.ones(num_features).realize()
        self.num_batches_tracked = Tensor.zeros((), dtype="int64").realize()
        for t in (self.running_mean, self.running_var, self.num_batches_tracked):
            _buffers[id(t)] = t

    def __call__(self, x):
        c = x.shape[1]
        shape = (1, c) + (1,) * (x.ndim - 2)
        axes = (0,) + tuple(range(2, x.ndim))
        if Tensor.training or not self.track_running_stats:
            mean = x.mean(axes)
            var = (x - mean.reshape(*shape)).square().mean(axes)
            if Tensor.training and self.track_running_stats:
                n = x.numel() / c
                m = self.momentum
                state = (self.running_mean, self.running_var, self.num_batches_tracked)
                if not all(t.is_realized() for t in state):
                    # the last call's update, which no optimizer step realised: realised now,
                    # so the statistics never chain across calls
                    Tensor.realize_all(*state)
                new_mean = self.running_mean * (1 - m) + mean.detach() * m
                new_var = self.running_var * (1 - m) + var.detach() * (m * n / max(n - 1, 1))
                self.running_mean.assign(new_mean)
                self.running_var.assign(new_var)
                self.num_batches_tracked.assign(self.num_batches_tracked + 1)
                # With the optimizer step's schedule, which computes the batch statistics anyway
                # (realising them here would compute the forward up to this layer once more).
                _pending.defer(*state)
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.reshape(*shape)) * (var.reshape(*shape) + self.eps).rsqrt()
        if self.weight is None:
            return y
        return y * self.weight.reshape(*shape) + self.bias.reshape(*shape)


BatchNorm = BatchNorm2d

from .optim import SGD, Adam, AdamW, Optimizer  # noqa: E402
from .state import (get_parameters, get_state_dict, load_state_dict, safe_load,  # noqa: E402
                    safe_load_metadata, safe_save)

from .step import CompiledTrainingStep, compile_step  # noqa: E402

__all__ = ["Linear", "LayerNorm", "RMSNorm", "Embedding", "Dropout", "GroupNorm", "Conv2d",
           "BatchNorm2d", "BatchNorm", "SGD", "Adam", "AdamW", "Optimizer", "get_parameters",
           "get_state_dict", "load_state_dict", "safe_save", "safe_load", "safe_load_metadata",
           "compile_step",
           "CompiledTrainingStep"]
