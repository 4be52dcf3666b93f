// affine_in_reduce (codegen/affine.hpp) and the k-tiled matmul whose store is a + b * sum: the
// SGD update fused into a weight gradient, a ReLU's gradient fused into its matmul.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "codegen/affine.hpp"
#include "codegen/optimize.hpp"
#include "matmul_shapes.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;
using polygrad::codegen::affine_in_reduce;

UOpRef f32(double v) {
  return polygrad::const_float(dtypes::float32, v);
}

/// a + b * r, evaluated for a REDUCE standing for `r` (leaves are constants and the REDUCE).
double eval(const UOpRef& n, const UOp* red, double r) {
  if (n.get() == red) return r;
  auto s = [&](size_t i) { return eval(n->src(i), red, r); };
  switch (n->op()) {
    case Op::CONST:
      return n->arg_float();
    case Op::ADD:
      return s(0) + s(1);
    case Op::SUB:
      return s(0) - s(1);
    case Op::MUL:
      return s(0) * s(1);
    case Op::NEG:
      return -s(0);
    case Op::CMPLT:
      return s(0) < s(1);
    case Op::WHERE:
      return s(0) != 0 ? s(1) : s(2);
    default:
      ADD_FAILURE() << "unexpected op in the test expression";
      return 0;
  }
}

TEST(AffineInReduce, SplitsEveryFormAndRefusesTheRest) {
  UOpRef k = range(idx(8), 0);
  UOpRef sum = reduce(Op::ADD, load(global(1, dtypes::float32), k), {k});
  const UOp* red = sum.get();
  // Each form against its value at two sums, with a + b * r rebuilt from the split.
  const std::vector<UOpRef> forms = {
      sum,
      f32(3) - sum * f32(0.5),                                     // SGD: w - lr * grad
      f32(3) - f32(0.5) * (sum + f32(0.25) * f32(3)),              // with weight decay inside
      polygrad::where(polygrad::lt(f32(0), f32(2)), sum, f32(0)),  // ReLU's gradient, taken
      polygrad::where(polygrad::lt(f32(2), f32(0)), sum, f32(7)),  // and not taken
      polygrad::where(polygrad::lt(f32(0), f32(1)), f32(-1), -(sum * f32(2))),
  };
  for (size_t i = 0; i < forms.size(); ++i) {
    auto f = affine_in_reduce(forms[i]);
    ASSERT_TRUE(f.has_value()) << "form " << i;
    EXPECT_EQ(f->reduce, red);
    for (double r : {0.0, 5.5}) {
      const double a = f->a ? eval(f->a, red, 0) : 0.0, b = f->b ? eval(f->b, red, 0) : 1.0;
      EXPECT_DOUBLE_EQ(a + b * r, eval(forms[i], red, r)) << "form " << i << " at " << r;
    }
  }
  // Not affine: a product of two sums, a sum under EXP2, a sum in a WHERE's condition.
  UOpRef k2 = range(idx(8), 1);
  UOpRef other = reduce(Op::ADD, load(global(2, dtypes::float32), k2), {k2});
  EXPECT_FALSE(affine_in_reduce(sum * other).has_value());
  EXPECT_FALSE(affine_in_reduce(sum * sum).has_value());
  EXPECT_FALSE(affine_in_reduce(polygrad::alu(Op::EXP2, {sum})).has_value());
  EXPECT_FALSE(
      affine_in_reduce(polygrad::where(polygrad::lt(sum, f32(0)), f32(1), f32(2))).has_value());
  EXPECT_FALSE(affine_in_reduce(f32(1)).has_value());
}

/// out[i*N+j] = epilogue(out[i*N+j], c[i*N+j], sum_k a[i*K+k] * b[k*N+j]).
using Epilogue = std::function<UOpRef(const UOpRef& out, const UOpRef& c, const UOpRef& sum)>;
using Reference = std::function<float(float out, float c, float sum)>;

void check_fused(int64_t m, int64_t n, int64_t kk, const Epilogue& epilogue,
                 const Reference& want_of) {
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), k = range(idx(kk), 2);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef b = global(2, dtypes::float32), c = global(3, dtypes::float32);
  UOpRef sum = reduce(Op::ADD, load(a, i * kk + k) * load(b, k * n + j), {k});
  UOpRef ast = sink({store(o, i * n + j, epilogue(load(o, i * n + j), load(c, i * n + j), sum))});
  // Small integers and a power-of-two rate: every value is exact in any summation order.
  std::vector<float> av = exact_ints(m * kk, 1), bv = exact_ints(kk * n, 5),
                     ov = exact_ints(m * n, 3), cv = exact_ints(m * n, 2);
  std::vector<float> want(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      float s = 0;
      for (int64_t x = 0; x < kk; ++x) s += av[r * kk + x] * bv[x * n + col];
      want[r * n + col] = want_of(ov[r * n + col], cv[r * n + col], s);
    }
  // Planned and run for AVX2's and AVX-512's vectors, whatever this host has. The plan tiles
  // k: the point of the test (1024 rows of b exceed L1 with 8 or 16 lanes).
  for (const polygrad::codegen::Target& t : {avx2_target(), avx512_target()}) {
    const polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(ast, t);
    ASSERT_NE(plan.j, nullptr) << f32_lanes(t) << " lanes";
    EXPECT_NE(plan.k, nullptr) << m << "x" << n << "x" << kk << ", " << f32_lanes(t) << " lanes";
    std::vector<HostBuf> bufs{HostBuf::of(ov), HostBuf::of(av), HostBuf::of(bv), HostBuf::of(cv)};
    run(compile(ast, t), bufs);
    EXPECT_EQ(bufs[0].as<float>(), want)
        << m << "x" << n << "x" << kk << ", " << f32_lanes(t) << " lanes";
  }
}

TEST(AffineInReduce, KTiledMatmulWithSgdUpdateInPlace) {
  for (auto [m, n, kk] : {std::array<int64_t, 3>{16, 1056, 1024}, {8, 784, 1024}})
    check_fused(
        m, n, kk, [](const UOpRef& w, const UOpRef&, const UOpRef& s) { return w - s * f32(0.5); },
        [](float w, float, float s) { return w - s * 0.5f; });
}

TEST(AffineInReduce, KTiledMatmulWithReluGradient) {
  for (auto [m, n, kk] : {std::array<int64_t, 3>{16, 1056, 1024}, {8, 784, 1024}})
    check_fused(
        m, n, kk,
        [](const UOpRef&, const UOpRef& c, const UOpRef& s) {
          return polygrad::where(polygrad::lt(f32(0), c), s, f32(0));
        },
        [](float, float c, float s) { return 0 < c ? s : 0.0f; });
}

}  // namespace
}  // namespace polygrad_test
