"""Tensors realised with the next optimizer step's schedule: the losses backward() was called on
(so that reading one after the step gives the value the gradients were taken at), and module
state assigned during a forward pass (batch norm statistics: realised on their own, they would
compute the forward up to their layer once more)."""
_roots = []
_state = []


def add_root(t):
    _roots.append(t)
    if len(_roots) > 16:  # no optimizer step is coming: keep the latest only
        del _roots[:-16]


def defer(*tensors):
    _state.extend(tensors)
    if len(_state) > 1024:  # forward passes with no step: drop what was realised
        _state[:] = [t for t in _state if not t.is_realized()]


def take():
    """The pending tensors not realised yet; the lists start over."""
    out = [t for t in _roots + _state if not t.is_realized()]
    _roots.clear()
    _state.clear()
    return out
