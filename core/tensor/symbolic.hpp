// Symbolic sizes in the tensor-level graph: a dimension that is a bound variable.
//
// A movement op carries its sizes as sources (lazy.hpp); a size is a CONST, or an expression
// over BIND(DEFINE_VAR(name, min, max), CONST value) nodes (ADD, MUL of them and of CONSTs).
// Shape inference reads an expression at its bound value, so a Tensor's shape stays ints, and
// the Tensor layer carries each axis' expression from the movement ops it builds to the ones
// it builds next (sym_shape): a (n, d) slice of a KV cache keeps n symbolic through matmul,
// softmax and mean. The schedule cache keys a graph on the variables, not on their values, and
// generalises its kernels over them (runtime/schedule_cache.cpp); the scheduler itself sees the
// graph with every BIND replaced by its value (strip_binds).
#ifndef POLYGRAD_TENSOR_SYMBOLIC_HPP
#define POLYGRAD_TENSOR_SYMBOLIC_HPP

#include "tensor/lazy.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace polygrad::lazy {

/// One size expression per axis: a CONST (index dtype) for a static size.
using SymShape = std::vector<UOpRef>;

/// BIND(DEFINE_VAR(name, vmin, vmax), value); a user error naming the variable and the value
/// when the value is outside [vmin, vmax] or the bounds are empty.
UOpRef bind_var(const std::string& name, int64_t vmin, int64_t vmax, int64_t value);
/// Whether any variable was bound in this process (the symbolic paths cost nothing before).
bool any_bound();

/// The value of a size expression at its variables' bound values.
int64_t dim_value(const UOp* d);
/// Whether `d` is a CONST.
inline bool is_static(const UOp* d) {
  return d->op() == Op::CONST;
}
/// A size from an int.
UOpRef dim_const(int64_t v);
/// a + b, a * b with constants folded.
UOpRef dim_add(const UOpRef& a, const UOpRef& b);
UOpRef dim_mul(const UOpRef& a, const UOpRef& b);

/// The size expressions of a tensor-level node's axes (CONSTs when nothing symbolic reaches it).
SymShape sym_shape(const UOp* u);
/// Drops this thread's memo of sym_shape and the nodes it holds (and with them the buffers
/// only they keep): after a realisation, whose graphs are done with.
void forget_sym_shapes();
/// Whether some axis is not a CONST.
bool has_symbolic(const SymShape& s);
/// The expressions of `target` (ints) for a reshape of a node of expressions `src` (ints
/// `src_ints`): an axis that maps to one source axis keeps its expression, an axis that merges
/// source axes takes their product, an axis split from a product takes its factors when they
/// have the target's sizes in order; any other axis is static.
SymShape reshape_dims(const SymShape& src, const Shape& src_ints, const Shape& target);
/// `dims` as sizes for `x`'s broadcast to `shape` (ints): its own expression where an axis is
/// not expanded, `hint`'s (the other operand's, aligned right) where one is, else a CONST.
SymShape broadcast_dims(const SymShape& x, const Shape& shape, const SymShape& hint);

/// Builders that take size expressions (lazy::reshape and friends take ints).
UOpRef reshape_sym(const UOpRef& x, const SymShape& dims);
UOpRef expand_sym(const UOpRef& x, const SymShape& dims);
/// Per axis (begin, end) / (before, after).
UOpRef shrink_sym(const UOpRef& x, const std::vector<std::pair<UOpRef, UOpRef>>& bounds);
UOpRef pad_sym(const UOpRef& x, const std::vector<std::pair<UOpRef, UOpRef>>& pads);

/// The variables bound in the graph of `root`: name -> (DEFINE_VAR, value). A user error when
/// one name is bound to two values or declared with two ranges.
struct Binding {
  UOpRef var;
  int64_t value = 0;
};
std::unordered_map<std::string, Binding> bindings(const UOpRef& root);

/// `root` with each BIND's value replaced by `values[name]` (names not listed keep theirs).
UOpRef rebind(const UOpRef& root, const std::unordered_map<std::string, int64_t>& values);
/// `root` with every BIND replaced by its value and the size expressions folded to CONSTs:
/// the graph the scheduler sees.
UOpRef strip_binds(const UOpRef& root);
/// Whether the shapes of `root`'s graph are consistent (elementwise sources of one shape,
/// reshapes keeping the count, expands of 1s, slices and pads in range, buffers as large as
/// their views): false for a graph rebound to a value the graph was not built for (a size
/// worked out as an int from the variable's value, not carried as an expression).
bool consistent_shapes(const UOpRef& root);

}  // namespace polygrad::lazy

#endif  // POLYGRAD_TENSOR_SYMBOLIC_HPP
