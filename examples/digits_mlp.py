"""Trains an MLP on scikit-learn's digits (1797 real 8x8 handwritten digits shipped with
python3-sklearn, no download) with polygrad, and prints the test accuracy.

    frontends/python/run_example.sh          # or: python3 examples/digits_mlp.py
"""
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

from polygrad import Tensor
from polygrad.nn import Adam, Linear, get_parameters


class MLP:
    def __init__(self, sizes):
        self.layers = [Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = layer(x).relu()
        return self.layers[-1](x)


def main(epochs=30, batch=64, seed=0):
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, random_state=seed,
                                                        stratify=y)
    Tensor.manual_seed(seed)
    model = MLP([64, 128, 64, 10])
    opt = Adam(get_parameters(model), lr=3e-3)
    rng = np.random.default_rng(seed)
    steps = len(x_train) // batch  # full batches only: every step reuses the same kernels
    start = time.perf_counter()
    with tqdm(total=epochs * steps, desc="training", unit="step") as bar:
        for epoch in range(epochs):
            order = rng.permutation(len(x_train))
            Tensor.training = True
            for s in range(steps):
                idx = order[s * batch:(s + 1) * batch]
                opt.zero_grad()
                loss = model(Tensor(x_train[idx])).cross_entropy(Tensor(y_train[idx]))
                loss.backward()
                opt.step()
                bar.update(1)
            Tensor.training = False
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.4f}")
    seconds = time.perf_counter() - start
    pred = model(Tensor(x_test)).argmax(-1).numpy()
    accuracy = float((pred == y_test).mean())
    print(f"trained {epochs} epochs ({epochs * steps} steps of {batch}) in {seconds:.1f} s")
    print(f"test accuracy: {accuracy * 100:.2f}% ({int((pred == y_test).sum())}/{len(y_test)})")
    return accuracy


if __name__ == "__main__":
    acc = main()
    raise SystemExit(0 if acc >= 0.95 else 1)
