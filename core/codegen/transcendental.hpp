// Decomposition of EXP2, LOG2 and SIN into ALU ops, for targets that set
// PG_CAP_DECOMPOSE_TRANSCENDENTAL (they have no math library).
//
// exp2: x = n + f with n = round(x), |f| <= 1/2; 2^f by its Taylor polynomial (degree 7 for
// float32, 13 for float64; truncation error below 2^-27 / 2^-56 relative), times 2^n built
// from exponent bits in two halves so that subnormal results round once. exp2(x * k) with
// k = +-log2(e) (Tensor::exp's form) is e^(+-x) from x itself: n = round(x log2 e),
// r = x - n ln2 with ln2 in two parts (Cody-Waite), e^r by its Taylor polynomial, times 2^n;
// rounding x * log2(e) first erred by up to |x| ulps.
// log2: x = 2^e * m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^24 / 2^54 first);
// log2(m) = 2/ln2 * atanh(s), s = (m-1)/(m+1), |s| < 0.172, by its odd series.
// sin: Cody-Waite reduction r = x - k*pi/2 with pi/2 split in three constants (k*c exact for
// |x| < ~6400 in float32 and up to 2^23 in float64), beyond 2^23 in float64 Payne-Hanek
// (x times the bits of 2/pi that matter, exactly, in 24-bit pieces), then the sin or cos
// Taylor polynomial on |r| <= pi/4 chosen by k mod 4. float32 sin is computed in float64 when
// the target has it (so exact for every float32); without float64, float32 sin is accurate for
// |x| < ~6400 only.
// float16 and bfloat16 are computed in float32 and rounded back. Special values: NaN in, NaN
// out; exp2(+-inf) = inf / 0; log2(0) = -inf, log2(x<0) = NaN, log2(inf) = inf; sin(+-inf) =
// NaN. Accuracy measured by tests/codegen/transcendental_test.cpp.
#ifndef POLYGRAD_CODEGEN_TRANSCENDENTAL_HPP
#define POLYGRAD_CODEGEN_TRANSCENDENTAL_HPP

#include "codegen/lower.hpp"

namespace polygrad::codegen {

/// `root` with every EXP2, LOG2 and SIN replaced by ALU ops.
UOpRef decompose_transcendentals(const UOpRef& root, const Target& target);

/// `root` with float32/float64 EXP2 and LOG2 replaced by ALU ops when the target has SIMD lanes,
/// for speed: a libm call (exp2f) keeps clang from vectorising the loop around it, the
/// polynomial vectorises (softmax rows: several times faster). Same accuracy as above (<= 1
/// ulp measured). SIN stays a call: its float32 form works in float64.
UOpRef decompose_for_vectors(const UOpRef& root, const Target& target);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_TRANSCENDENTAL_HPP
