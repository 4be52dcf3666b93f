"""polygrad.distributed: collectives between processes and data-parallel training, over a
collective-communication plugin of libpolygrad (pg_comm_* of the C API; "mpi" by default).

    mpirun -np 2 python3 train.py        # in train.py:

    import polygrad.distributed as dist
    dist.init()                          # rank and world size from mpirun's environment
    model = dist.DataParallel(MLP())     # parameters broadcast from rank 0
    ...
    loss.backward()
    model.sync_gradients()               # gradients averaged over the ranks, in buckets
    opt.step()                           # the same step on every rank

A collective whose peer died, or that waits longer than the timeout, raises PolygradCommError
naming the peer; the communicator is then broken. Under mpirun a dead rank normally makes
mpirun end the whole job; `mpirun --enable-recovery` lets the others report it.
"""
import os

from ._ffi import PolygradValueError, byref, c_char_p, c_int, c_void_p, check, fn, lib
from .tensor import Tensor, _call

_OPS = {"sum": 0, "max": 1, "mean": 2}

# Launchers' variables, in the order they are read: (rank, world size).
_ENV = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),  # Open MPI's mpirun
        ("PMI_RANK", "PMI_SIZE"),                          # MPICH's, Slurm's
        ("RANK", "WORLD_SIZE"))                            # torchrun-style

_comm = None


def _from_env():
    for rank, size in _ENV:
        if rank in os.environ and size in os.environ:
            return int(os.environ[rank]), int(os.environ[size])
    return 0, 1


def init(backend="mpi", rank=None, world_size=None, timeout=None, address=None):
    """Joins the group through the ccl plugin `backend` (polygrad_ccl_<backend>.so). Rank and
    world size default to the launcher's environment (mpirun's OMPI_COMM_WORLD_RANK/SIZE,
    PMI_RANK/SIZE, torchrun-style RANK/WORLD_SIZE), else a world of one. `timeout` (seconds, or
    POLYGRAD_CCL_TIMEOUT) bounds every collective's wait for its peers; None: the plugin's
    default. Every rank calls it; calling it again is an error until shutdown()."""
    global _comm
    if _comm is not None:
        raise RuntimeError("polygrad.distributed.init: already initialised (shutdown() first)")
    env_rank, env_size = _from_env()
    rank = env_rank if rank is None else int(rank)
    world_size = env_size if world_size is None else int(world_size)
    if timeout is None and os.environ.get("POLYGRAD_CCL_TIMEOUT"):
        timeout = float(os.environ["POLYGRAD_CCL_TIMEOUT"])
    out = c_void_p()
    check(fn("pg_comm_init")(backend.encode(), rank, world_size,
                             (address or "").encode(), float(timeout or 0), byref(out)))
    _comm = out


def is_initialized():
    return _comm is not None


def _handle():
    if _comm is None:
        raise RuntimeError("polygrad.distributed: call init() first")
    return _comm


def shutdown():
    """Leaves the group (frees the communicator). init() may then be called again."""
    global _comm
    if _comm is not None:
        lib.pg_comm_free(_comm)
        _comm = None


def rank():
    out = c_int()
    check(lib.pg_comm_rank(_handle(), byref(out)))
    return out.value


def world_size():
    out = c_int()
    check(lib.pg_comm_world_size(_handle(), byref(out)))
    return out.value


def transport():
    """What the plugin runs on, e.g. "Open MPI v4.1.4"."""
    out = c_char_p()
    check(lib.pg_comm_transport(_handle(), byref(out)))
    return out.value.decode()


def _op(op):
    if op not in _OPS:
        raise PolygradValueError(f"reduction {op!r}: expected one of {', '.join(_OPS)}")
    return _OPS[op]


def all_reduce(t, op="sum"):
    """t reduced over the ranks ("sum", "max" or "mean"), as a new tensor on every rank."""
    return _call(lib.pg_comm_all_reduce, _handle(), t._h, _op(op))


def all_reduce_(t, op="sum"):
    """all_reduce into t itself (torch's in-place form): t is realised, then its buffer holds
    the reduced values; nothing is allocated. Graphs built from t earlier and not realised yet
    read the new values. Returns t."""
    check(lib.pg_comm_all_reduce_inplace(_handle(), t._h, _op(op)))
    return t


def broadcast(t, src=0):
    """Rank src's t on every rank (t has the same shape and dtype everywhere)."""
    return _call(lib.pg_comm_broadcast, _handle(), t._h, int(src))


def all_gather(t):
    """The ranks' t stacked along a new leading axis of size world_size(), in rank order."""
    return _call(lib.pg_comm_all_gather, _handle(), t._h)


def reduce_scatter(t, op="sum"):
    """This rank's block of t (world_size() equal blocks along axis 0) reduced over the ranks."""
    return _call(lib.pg_comm_reduce_scatter, _handle(), t._h, _op(op))


def barrier():
    check(lib.pg_comm_barrier(_handle()))


class DataParallel:
    """Wraps a model for data-parallel training: every rank holds the whole model and trains on
    its share of each global batch. At construction the parameters are broadcast from rank 0
    (so every rank starts alike, whatever its seed); sync_gradients(), called between
    backward() and the optimizer's step, replaces each gradient by its mean over the ranks,
    with one all_reduce per bucket of about `bucket_bytes`. The optimizer then makes the same
    step on every rank, and the weights stay equal bit for bit."""

    def __init__(self, module, params=None, bucket_bytes=25 << 20):
        from .nn import get_parameters
        self.module = module
        self.params = [p for p in (params if params is not None else get_parameters(module))]
        self.buckets = _buckets(self.params, bucket_bytes)
        for p in self.params:
            p.realize()
        for bucket in self.buckets:
            flat = _flatten(bucket)
            flat = broadcast(flat, 0)
            for p, piece in zip(bucket, _split(flat, bucket)):
                p.assign(piece)
            Tensor.realize_all(bucket)

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def sync_gradients(self):
        """Averages every parameter's gradient over the ranks (a parameter without a gradient
        takes part with zeros, so every rank sends the same buckets)."""
        flats = []
        for bucket in self.buckets:
            grads = [p.grad if p.grad is not None else p.zeros_like() for p in bucket]
            flats.append(_flatten(grads))
        # The backward graph runs once, with the losses it was taken from.
        Tensor.realize_all(Tensor._take_pending_roots() + flats)
        for bucket, flat in zip(self.buckets, flats):
            all_reduce_(flat, "mean")  # flat is ours alone: reduced in place, no new memory
            for p, piece in zip(bucket, _split(flat, bucket)):
                p.grad = piece


def _buckets(params, bucket_bytes):
    """Parameters grouped by device and dtype, in order, each group cut at bucket_bytes."""
    buckets, current, size, key = [], [], 0, None
    for p in params:
        k = (p.device, p.dtype)
        if current and (k != key or size + p.nbytes > bucket_bytes):
            buckets.append(current)
            current, size = [], 0
        current.append(p)
        size += p.nbytes
        key = k
    if current:
        buckets.append(current)
    return buckets


def _flatten(tensors):
    return tensors[0].reshape(-1).cat(*[t.reshape(-1) for t in tensors[1:]]) \
        if len(tensors) > 1 else tensors[0].reshape(-1)


def _split(flat, like):
    pieces, at = [], 0
    for p in like:
        n = p.numel()
        pieces.append(flat[at:at + n].reshape(p.shape))
        at += n
    return pieces


from .distributed_devices import all_reduce_devices  # noqa: E402  (within one process)

__all__ = ["init", "is_initialized", "shutdown", "rank", "world_size", "transport",
           "all_reduce", "all_reduce_", "broadcast", "all_gather", "reduce_scatter", "barrier",
           "DataParallel", "all_reduce_devices"]
