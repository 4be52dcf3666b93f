// Affine views of kernel expressions: a stored value as an affine function of the one
// reduction in it (for k tiling), an index as an affine function of one range.
#ifndef POLYGRAD_CODEGEN_AFFINE_HPP
#define POLYGRAD_CODEGEN_AFFINE_HPP

#include <optional>

#include "ir/uop.hpp"

namespace polygrad::codegen {

/// value = a + b * reduce, with a and b free of the reduce (null a: 0, null b: 1).
struct AffineInReduce {
  const UOp* reduce = nullptr;
  UOpRef a;
  UOpRef b;
};

/// `value` split as a + b * r around the one REDUCE r it contains, when every node on the path
/// from `value` down to r is ADD, SUB, MUL, NEG or WHERE with r in exactly one operand (not a
/// WHERE's condition). An SGD update `w - lr * sum` is a = w, b = -lr; a ReLU's gradient
/// `where(x > 0, sum, 0)` is a = 0 where x > 0 (else 0), b = 1 where x > 0 (else 0). nullopt for
/// anything else (no REDUCE, two, a REDUCE inside a transcendental...).
std::optional<AffineInReduce> affine_in_reduce(const UOpRef& value);

/// The coefficient of the range `j` in the index expression `n` (another RANGE, a CONST or a
/// DEFINE_VAR counts as free of j), or nullopt when `n` is not affine in j with a constant
/// coefficient (IDIV, MOD, a product of two j-dependent terms, j times a variable...).
std::optional<int64_t> coefficient(const UOp* n, const UOp* j);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_AFFINE_HPP
