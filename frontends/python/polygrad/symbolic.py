"""Symbolic sizes: a dimension bound to a variable, as tinygrad's
``Variable("start_pos", 1, MAX).bind(p)``.

A graph whose sizes are bound variables is scheduled and compiled once for every value of them;
the kernels take the value at launch. ``Tensor.shape`` reports the bound values (ints), where
tinygrad's reports the variable. Bound variables are accepted by ``shrink``, ``reshape``,
``expand``, ``pad`` (zeros) and by slices ``x[:n]`` / ``x[a:b]`` whose bounds are bound
variables or ints (step 1).
"""
from ._ffi import byref, c_void_p, check, lib


class Variable:
    """A named size with inclusive bounds [min, max]; ``bind(value)`` gives it a value."""

    def __init__(self, name, vmin, vmax):
        self.name, self.min, self.max = str(name), int(vmin), int(vmax)
        self.bind(self.min)  # checks the name and the bounds

    def bind(self, value):
        """The variable bound to ``value``; a PolygradValueError naming the variable and the
        value when it is outside [min, max]."""
        return BoundVariable(self, int(value))

    def __repr__(self):
        return f"Variable({self.name!r}, {self.min}, {self.max})"


class SymbolicSize:
    """A size that is an expression of bound variables (``n + 1``, ``max_len - n``, ``2 * n``):
    the movement ops take it as they take a bound variable. ``int(s)`` and ``s.val`` are its
    value."""

    def __init__(self, handle, value):
        self._h, self.val = handle, value

    def _combine(self, other, sign):
        h = c_void_p()
        if isinstance(other, SymbolicSize):
            if sign < 0:
                neg = c_void_p()
                check(lib.pg_dim_affine(other._h, -1, 0, byref(neg)))
                other = SymbolicSize(neg, -other.val)
            check(lib.pg_dim_add(self._h, other._h, byref(h)))
            return SymbolicSize(h, self.val + other.val)
        k = int(other) * sign
        check(lib.pg_dim_affine(self._h, 1, k, byref(h)))
        return SymbolicSize(h, self.val + k)

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (self * -1) + other

    def __mul__(self, k):
        h = c_void_p()
        check(lib.pg_dim_affine(self._h, int(k), 0, byref(h)))
        return SymbolicSize(h, self.val * int(k))

    __rmul__ = __mul__

    def __int__(self):
        return self.val

    __index__ = __int__

    def __repr__(self):
        return f"SymbolicSize({self.val})"

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            try:
                lib.pg_dim_free(h)
            except Exception:  # (at interpreter exit)
                pass


class BoundVariable(SymbolicSize):
    """A Variable with its value: a size for the movement ops. ``int(b)`` and ``b.val`` are the
    value; arithmetic with ints and other sizes gives a SymbolicSize."""

    def __init__(self, var, value):
        h = c_void_p()
        check(lib.pg_variable_bind(var.name.encode(), var.min, var.max, value, byref(h)))
        super().__init__(h, value)
        self.var = var

    def unbind(self):
        """(variable, value), as tinygrad's."""
        return self.var, self.val

    def __repr__(self):
        return f"{self.var.name}={self.val}"


def is_bound(v):
    return isinstance(v, SymbolicSize)


def dims(values):
    """(int64 array, pg_dim_t array, n) for a list of ints and bound variables."""
    from ._ffi import int64s
    ints, n = int64s([v.val if is_bound(v) else v for v in values])
    handles = (c_void_p * max(n, 1))(*[v._h.value if is_bound(v) else None for v in values])
    return ints, handles, n
