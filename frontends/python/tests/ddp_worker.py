"""Started by test_distributed.py under `mpirun -np 2`: data-parallel training of a small MLP
on scikit-learn's digits (polygrad.distributed.DataParallel), and ranks that die or stall in
the middle of it.

    ddp_worker.py train OUT_DIR      each rank writes OUT_DIR/rank<r>.npz (its final weights)
    ddp_worker.py jit OUT_DIR        the same, every step (forward, backward, the gradients'
                                     all_reduce, SGD) one TinyJit function
    ddp_worker.py kill OUT_DIR       rank 1 is killed before its third gradient all_reduce
    ddp_worker.py stall OUT_DIR      rank 1 stops calling collectives (sleeps) at that point,
                                     past rank 0's timeout
    ddp_worker.py late OUT_DIR       rank 1 never starts MPI: rank 0's init times out
    ddp_worker.py collectives OUT_DIR  every collective on the default device (POLYGRAD_DEVICE)
                                       against numpy; each rank writes OUT_DIR/ok<r>.txt
In kill and stall modes rank 0 writes OUT_DIR/error.txt: the error, and the seconds it took.
"""
import os
import signal
import sys
import time

import numpy as np

GLOBAL_BATCH = 64
STEPS = 12
SIZES = (64, 32, 10)


def digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    return (d.data / 16.0).astype(np.float32), d.target.astype(np.int32)


def global_batches(n):
    rng = np.random.default_rng(0)
    return [rng.choice(n, GLOBAL_BATCH, replace=False) for _ in range(STEPS)]


class MLP:
    def __init__(self):
        from polygrad.nn import Linear
        self.layers = [Linear(a, b) for a, b in zip(SIZES[:-1], SIZES[1:])]

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = layer(x).relu()
        return self.layers[-1](x)


def train(rank=0, world=1, seed=0, on_step=None, jit=False):
    """The weights after STEPS SGD steps: each rank takes its contiguous share of every global
    batch; world 1 is the single-process reference on the whole batch. jit: each step is one
    TinyJit function (captured at its second call, replayed from the third on)."""
    from polygrad import Tensor, TinyJit
    from polygrad.nn import SGD, get_parameters
    Tensor.manual_seed(seed)
    model = MLP()
    if world > 1:
        import polygrad.distributed as dist
        model = dist.DataParallel(model)
    params = get_parameters(model.module if world > 1 else model)
    opt = SGD(params, lr=0.1, momentum=0.9)
    x, y = digits()

    def one_step(xb, yb):
        opt.zero_grad()
        loss = model(xb).cross_entropy(yb)
        loss.backward()
        if world > 1:
            model.sync_gradients()
        opt.step()
        return loss.realize()

    run = TinyJit(one_step) if jit else one_step
    for step, idx in enumerate(global_batches(len(x))):
        local = idx.reshape(world, -1)[rank]
        if on_step is not None:
            on_step(step)
        run(Tensor(x[local]), Tensor(y[local]))
    return [p.numpy() for p in params]


def check_collectives(dist, rank, world):
    """Each collective's result against numpy's, on every dtype family."""
    from polygrad import Tensor
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.uint8):
        mine = (np.arange(12).reshape(4, 3) * (rank + 1) % 7).astype(dtype)
        every = [(np.arange(12).reshape(4, 3) * (r + 1) % 7).astype(dtype) for r in range(world)]
        x = Tensor(mine)
        np.testing.assert_array_equal(dist.all_reduce(x).numpy(), sum(every).astype(dtype))
        np.testing.assert_array_equal(dist.all_reduce(x, "max").numpy(), np.max(every, axis=0))
        if np.issubdtype(dtype, np.floating):
            np.testing.assert_allclose(dist.all_reduce(x, "mean").numpy(), np.mean(every, axis=0),
                                       rtol=1e-6)
        np.testing.assert_array_equal(dist.broadcast(x, world - 1).numpy(), every[-1])
        np.testing.assert_array_equal(dist.all_gather(x).numpy(), np.stack(every))
        block = np.split(sum(every).astype(dtype), world)[rank]
        np.testing.assert_array_equal(dist.reduce_scatter(x).numpy(), block)
        np.testing.assert_array_equal(x.numpy(), mine)  # the input is left as it was
        y = Tensor(mine) + 0  # lazy: realised by the in-place form, then overwritten
        assert dist.all_reduce_(y, "max") is y
        np.testing.assert_array_equal(y.numpy(), np.max(every, axis=0))
    dist.barrier()


def main(mode, out):
    import polygrad.distributed as dist
    from polygrad import PolygradCommError
    timeout = float(os.environ.get("DDP_WORKER_TIMEOUT", "30"))
    if mode == "late" and os.environ.get("OMPI_COMM_WORLD_RANK") == "1":
        time.sleep(timeout + 3)  # never starts MPI
        os._exit(0)
    start = time.monotonic()
    try:
        dist.init(timeout=timeout)
    except PolygradCommError as e:
        with open(os.path.join(out, "error.txt"), "w") as f:
            f.write(f"{time.monotonic() - start:.3f}\n{e}\n")
        return 3
    rank, world = dist.rank(), dist.world_size()

    def misbehave(step):
        if rank == 1 and step == 2:
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "stall":  # alive, but past rank 0's timeout; then gone without a word
                time.sleep(timeout + 5)
                os._exit(0)

    if mode == "collectives":
        check_collectives(dist, rank, world)
        with open(os.path.join(out, f"ok{rank}.txt"), "w") as f:
            f.write(dist.transport())
        return 0
    if mode in ("train", "jit"):
        # Each rank starts from its own random weights: DataParallel broadcasts rank 0's.
        weights = train(rank, world, seed=rank, jit=mode == "jit")
        np.savez(os.path.join(out, f"rank{rank}.npz"), *weights)
        return 0
    start = time.monotonic()
    try:
        train(rank, world, seed=0, on_step=misbehave)
    except PolygradCommError as e:
        if rank == 0:
            with open(os.path.join(out, "error.txt"), "w") as f:
                f.write(f"{time.monotonic() - start:.3f}\n{e}\n")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
