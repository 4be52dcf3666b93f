"""compile_step: a training step captured once and replayed (the seed's Compiled Training
Steps, over polygrad.capture)."""
from ..capture import capture
from ..tensor import Tensor


class CompiledTrainingStep:
    """What compile_step returns: run() performs one step over the current contents of the
    inputs' memory (write the next batch with `x._data[:] = ...`); loss_value() is the loss that
    step computed (the value before its update, as when the step runs eagerly)."""

    def __init__(self, captured):
        self._captured, self.steps = captured, 0

    @property
    def loss(self):
        """The tensor the step function returned (its value is the latest run's)."""
        return self._captured.result

    @property
    def kernel_count(self):
        return self._captured.kernel_count

    def run(self):
        self._captured.run()
        self.steps += 1

    __call__ = run

    def loss_value(self):
        if self.steps == 0:
            raise RuntimeError("compile_step: loss_value() before the first run()")
        if not isinstance(self.loss, Tensor):
            raise TypeError("compile_step: the step function returned "
                            f"{type(self.loss).__name__}, not a loss tensor")
        return self.loss.item()


def compile_step(fn, *args, **kwargs):
    """Captures fn(*args, **kwargs) (forward, backward, optimizer step) without running it and
    returns a CompiledTrainingStep whose run() replays the captured kernels. Tensor arguments on
    the cpu device that are not trained are moved into host memory first, so writing
    `x._data[:]` between runs feeds the next batch. Everything else fn does is fixed at capture
    time: change the model, the optimizer's settings or the input shapes by compiling again."""
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor) and not a.requires_grad and a.device.startswith("CPU"):
            a._data  # noqa: B018  (binds the tensor to host memory before the capture reads it)
    return CompiledTrainingStep(capture(fn, *args, **kwargs))
