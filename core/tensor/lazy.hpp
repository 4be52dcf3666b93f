// The tensor-level graph: builders for the lazy nodes a Tensor holds, and shape inference.
//
// A tensor-level graph is made of these ops (core/ir/ops.hpp has each op's conventions):
//   BUFFER            device memory, shape (count,); the runtime knows its device (by id)
//   CONST             a scalar, shape ()
//   RESHAPE EXPAND    srcs (x, dim...) with dims as int64 CONSTs, or expressions over bound
//                     variables (tensor/symbolic.hpp)
//   PAD SHRINK        srcs (x, a0, b0, a1, b1, ...) likewise
//   PERMUTE FLIP      arg = axis list
//   REDUCE_AXIS       arg = {alu op (ADD, MAX, MUL), axis...}; reduced axes keep size 1
//   ALU ops, CAST, BITCAST   elementwise: every source has the same shape (broadcasting is an
//                     explicit RESHAPE + EXPAND made by the Tensor layer)
//   CONTIGUOUS        realise into a fresh buffer; COPY: to another device (arg = device)
//   ASSIGN            (target, value): write value into target's buffer, result = target
//   DETACH            the source, without gradient
// Builders check only what the IR needs (source counts, dtypes); the Tensor layer checks shapes
// and raises user errors that name the op and the shapes.
#ifndef POLYGRAD_TENSOR_LAZY_HPP
#define POLYGRAD_TENSOR_LAZY_HPP

#include "ir/uop.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::lazy {

/// A static shape: one size per axis; () for a scalar.
using Shape = std::vector<int64_t>;

/// "(2, 3)", "()" for a scalar.
std::string shape_str(const Shape& s);
/// Product of the sizes (1 for a scalar).
int64_t numel(const Shape& s);

/// Shapes of tensor-level nodes, each worked out once per node and cached in it (see
/// UOp::cached_shape); a shape handed out stays valid while the object lives.
class ShapeOf {
 public:
  const Shape& operator()(const UOp* u);
  const Shape& operator()(const UOpRef& u) { return (*this)(u.get()); }

 private:
  static Shape compute(const UOp* u);
  /// The nodes whose shapes were handed out: a shape lives in its node, and a caller may hold
  /// the shape of a node only a temporary held.
  std::vector<UOpRef> keep_;
};

/// One-off shape of a node (walks the graph; use ShapeOf in passes).
Shape shape_of(const UOpRef& u);

/// The int64 values of sources [first, end) of a movement op: CONSTs, or size expressions at
/// their variables' bound values (tensor/symbolic.hpp).
std::vector<int64_t> int_srcs(const UOp* u, size_t first);

/// A fresh BUFFER node of `count` elements (a new id each call; see runtime/buffers.hpp).
UOpRef buffer(DType dtype, int64_t count, int64_t id);
/// BUFFER id and element count.
int64_t buffer_id(const UOp* u);
int64_t buffer_count(const UOp* u);

/// A scalar CONST (shape ()). Ints and bool take `v` truncated; floats take it as is.
UOpRef scalar(DType dtype, double v);
/// `v` broadcast to `shape`: EXPAND(RESHAPE(CONST, 1...), shape).
UOpRef full(DType dtype, double v, const Shape& shape);
/// 0, 1, ..., n - 1 of an int `dtype`, computed where it is read (no buffer).
UOpRef iota(DType dtype, int64_t n);
/// `v` exactly, for an int dtype (wrapped to it): an int64 beyond 2^53 has no double.
UOpRef full_int(DType dtype, int64_t v, const Shape& shape);

UOpRef reshape(const UOpRef& x, const Shape& shape);
UOpRef expand(const UOpRef& x, const Shape& shape);
UOpRef permute(const UOpRef& x, const std::vector<int64_t>& order);
/// Per axis (before, after) zeros.
UOpRef pad(const UOpRef& x, const std::vector<std::pair<int64_t, int64_t>>& pads);
/// Per axis [begin, end).
UOpRef shrink(const UOpRef& x, const std::vector<std::pair<int64_t, int64_t>>& bounds);
UOpRef flip(const UOpRef& x, const std::vector<int64_t>& axes);
/// Reduce `axes` with `op` (ADD, MAX or MUL); reduced axes keep size 1.
UOpRef reduce(const UOpRef& x, Op op, const std::vector<int64_t>& axes);
/// REDUCE_AXIS op and axes.
Op reduce_op(const UOp* u);
std::vector<int64_t> reduce_axes(const UOp* u);

/// An elementwise node: dtype bool for comparisons, the value sources' dtype otherwise.
UOpRef elementwise(Op op, std::initializer_list<UOpRef> srcs);
UOpRef cast(const UOpRef& x, DType dtype);
UOpRef bitcast(const UOpRef& x, DType dtype);
UOpRef contiguous(const UOpRef& x);
UOpRef detach(const UOpRef& x);
UOpRef copy_to(const UOpRef& x, const std::string& device);
UOpRef assign(const UOpRef& target, const UOpRef& value);
/// A write of `value` through `view` (movement ops over `target`'s realised root, which has
/// value's shape) into `target`'s buffer, the other elements untouched. The node's value is
/// the whole target after the write (target's shape).
UOpRef assign_view(const UOpRef& target, const UOpRef& value, const UOpRef& view);

/// True for a realised tensor: a BUFFER, or RESHAPE of a BUFFER to a shape of the same count.
bool is_realized(const UOp* u);

/// The node that says where `u` computes: the first COPY (whose arg is the device) or BUFFER
/// (whose device the runtime knows) reached from `u` without entering a COPY's source, which
/// lives on another device; nullptr for a graph of constants, which computes wherever it is
/// read. The Tensor layer keeps the tensor operands of an op on one device, so any such node
/// answers for all of them.
const UOp* placement(const UOp* u);

/// The tensor a chain of ASSIGNs writes (`p.assign(a); p.assign(b)`: the second's target is the
/// first): the target of the first; `u` itself when it is no ASSIGN.
inline const UOp* assign_root(const UOp* u) {
  while (u->op() == Op::ASSIGN) u = u->src(0).get();
  return u;
}
/// The BUFFER behind a realised tensor (`u` must be one).
inline const UOp* realized_buffer(const UOp* u) {
  return u->op() == Op::BUFFER ? u : u->src(0).get();
}
/// The id of the buffer an ASSIGN (or a chain of them) writes.
inline int64_t assigned_buffer_id(const UOp* assign) {
  return buffer_id(realized_buffer(assign_root(assign)));
}

}  // namespace polygrad::lazy

#endif  // POLYGRAD_TENSOR_LAZY_HPP
