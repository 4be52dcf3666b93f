"""Trains the digits MLP (examples/digits_mlp.py) data-parallel on several processes: every rank
holds the whole model, takes its share of each global batch, and the gradients are averaged
over the ranks (polygrad.distributed over the ccl_mpi plugin) before the same Adam step.

    mpirun -np 2 --bind-to none python3 examples/ddp_digits.py
    (as root, with OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 set)

Rank 0 prints the progress and the test accuracy; every rank checks at the end that its weights
equal rank 0's bit for bit.
"""
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import polygrad.distributed as dist
from polygrad import Tensor
from polygrad.nn import Adam, Linear, get_parameters


class MLP:
    def __init__(self, sizes):
        self.layers = [Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = layer(x).relu()
        return self.layers[-1](x)


def main(epochs=30, global_batch=64, seed=0):
    dist.init()
    rank, world = dist.rank(), dist.world_size()
    if global_batch % world:
        raise SystemExit(f"the global batch {global_batch} does not split over {world} ranks")
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, random_state=seed,
                                                        stratify=y)
    Tensor.manual_seed(seed + rank)  # any start: DataParallel broadcasts rank 0's weights
    model = dist.DataParallel(MLP([64, 128, 64, 10]))
    params = get_parameters(model.module)
    opt = Adam(params, lr=3e-3)
    rng = np.random.default_rng(seed)  # the same global batches on every rank
    steps = len(x_train) // global_batch
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        Tensor.training = True
        for s in range(steps):
            idx = order[s * global_batch:(s + 1) * global_batch].reshape(world, -1)[rank]
            opt.zero_grad()
            loss = model(Tensor(x_train[idx])).cross_entropy(Tensor(y_train[idx]))
            loss.backward()
            model.sync_gradients()
            opt.step()
        Tensor.training = False
        mean_loss = dist.all_reduce(loss, "mean").item()
        if rank == 0 and (epoch + 1) % 5 == 0:
            print(f"epoch {epoch + 1}: loss {mean_loss:.4f}", flush=True)
    seconds = time.perf_counter() - start
    # Every rank holds rank 0's weights, bit for bit.
    for p in params:
        same = dist.all_reduce((p != dist.broadcast(p, 0)).sum(), "max").item()
        if same != 0:
            raise SystemExit(f"rank {rank}: weights differ from rank 0's")
    pred = model(Tensor(x_test)).argmax(-1).numpy()
    accuracy = float((pred == y_test).mean())
    if rank == 0:
        print(f"trained {epochs} epochs ({epochs * steps} steps of {global_batch} over {world} "
              f"ranks, {dist.transport()}) in {seconds:.1f} s")
        print(f"weights equal on every rank; test accuracy: {accuracy * 100:.2f}% "
              f"({int((pred == y_test).sum())}/{len(y_test)})")
    return accuracy


if __name__ == "__main__":
    acc = main()
    raise SystemExit(0 if acc >= 0.95 else 1)
