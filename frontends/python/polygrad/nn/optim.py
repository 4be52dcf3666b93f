"""Optimizers. Each step builds the update of every parameter as Tensor ops, writes it with
assign, and realises parameters, gradients and optimizer state in one pg_tensor_realize_all
call (one schedule)."""
from ..tensor import Tensor


class Optimizer:
    def __init__(self, params, lr):
        from . import _buffers
        seen, ps = set(), []
        for p in params:
            if id(p) in seen or _buffers.get(id(p)) is p:
                continue
            seen.add(id(p))
            if not p.requires_grad:
                p.requires_grad = True
            ps.append(p)
        self.params = ps
        self.lr = lr

    @property
    def lr(self):
        return self._lr

    @lr.setter
    def lr(self, value):
        # The learning rate lives in a one-element buffer that the updates read, so a schedule
        # that changes it every step reruns the same kernels (as a float it would be a new
        # constant in a new graph each step: a new schedule and new kernels). float64, so a
        # float64 parameter steps by the lr given, not by it rounded to float32.
        # It lives on the first parameter's device (copied to another's where one differs).
        self._lr = float(value)
        if getattr(self, "_lr_t", None) is None:
            device = self.params[0].device if self.params else None
            self._lr_t = Tensor([self._lr], dtype="float64", device=device).realize()
        else:
            self._lr_t.assign([self._lr]).realize()

    def _lr_as(self, t):
        return self._lr_t.to(t.device).cast(t.dtype)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _state(self):
        return []

    def step(self):
        # One schedule: the losses backward() was called on (so that reading them afterwards
        # gives the value the gradients were taken at), the gradients (which read the
        # parameters: realised before the writes, p.grad keeps the values the step used, as
        # torch's does), every parameter's assign, and the optimizer state. The core runs the
        # assigned values first, then the writes.
        grads = [(i, p, p.grad) for i, p in enumerate(self.params)]
        grads = [x for x in grads if x[2] is not None]
        targets = Tensor._take_pending_roots()
        targets.extend(g for _, _, g in grads)
        for i, p, g in grads:
            targets.append(p)
            p.assign(self._update(i, p, g))
        targets.extend(self._state())
        if targets:
            Tensor.realize_all(targets)

    def _update(self, i, p, g):
        raise NotImplementedError


class SGD(Optimizer):
    """p -= lr * (g + weight_decay * p), with momentum buffers (torch semantics; nesterov)."""

    def __init__(self, params, lr=0.01, momentum=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, lr)
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
        self.b = [p.zeros_like().realize() for p in self.params] \
            if momentum else []

    def _state(self):
        return self.b

    def _update(self, i, p, g):
        if self.weight_decay:
            g = g + p.detach() * self.weight_decay
        if self.momentum:
            b = self.b[i].assign(self.b[i] * self.momentum + g)
            g = g + b * self.momentum if self.nesterov else b
        return p.detach() - g * self._lr_as(g)


class _AdamBase(Optimizer):
    decoupled = False

    def __init__(self, params, lr, betas, eps, weight_decay):
        super().__init__(params, lr)
        self.b1, self.b2 = betas
        self.eps, self.weight_decay = eps, weight_decay
        self.m = [p.zeros_like().realize() for p in self.params]
        self.v = [p.zeros_like().realize() for p in self.params]
        # b1^t and b2^t of each parameter (torch counts each parameter's steps: one that gets
        # no gradient in a step does not advance), in float64 buffers of one entry per
        # parameter, so every step runs the same (cached) kernels at any parameter's precision.
        # (On the first parameter's device, as the learning rate.)
        n = len(self.params)
        device = self.params[0].device if self.params else None
        self.b1_t = Tensor.ones(n, dtype="float64", device=device).realize()
        self.b2_t = Tensor.ones(n, dtype="float64", device=device).realize()

    def _state(self):
        return self.m + self.v + [self.b1_t, self.b2_t]

    def step(self):
        # Only the parameters with a gradient advance (a scalar factor when all do: the same
        # graph every step, no host data).
        stepped = [p.grad is not None for p in self.params]

        def factor(beta):
            factors = [beta if s else 1.0 for s in stepped]
            return beta if all(stepped) else self.b1_t._operand(factors, "float64")
        self.b1_t.assign(self.b1_t * factor(self.b1))
        self.b2_t.assign(self.b2_t * factor(self.b2))
        super().step()

    def _update(self, i, p, g):
        p = p.detach()
        if self.weight_decay and not self.decoupled:
            g = g + p * self.weight_decay
        m = self.m[i].assign(self.m[i] * self.b1 + g * (1.0 - self.b1))
        v = self.v[i].assign(self.v[i] * self.b2 + g.square() * (1.0 - self.b2))
        m_hat = m / (1.0 - self.b1_t[i]).to(m.device).cast(m.dtype)
        v_hat = v / (1.0 - self.b2_t[i]).to(v.device).cast(v.dtype)
        upd = m_hat / (v_hat.sqrt() + self.eps)
        if self.weight_decay and self.decoupled:
            p = p * (1.0 - self._lr_as(p) * self.weight_decay)
        return p - upd * self._lr_as(upd)


class Adam(_AdamBase):
    """torch.optim.Adam: weight_decay is an L2 term added to the gradient."""

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps, weight_decay)


class AdamW(_AdamBase):
    """torch.optim.AdamW: decoupled weight decay (p *= 1 - lr * weight_decay)."""
    decoupled = True

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, lr, betas, eps, weight_decay)
