// SizeTemplates: kernels that differ only in a size share one general kernel, which computes
// what each of them computes.
#include "runtime/size_templates.hpp"

#include "harness.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace polygrad_test {
namespace {

using polygrad::runtime::SizeMatch;
using polygrad::runtime::SizeTemplates;

constexpr int64_t kBatch = 3, kDim = 5;

/// Attention's scores for sequence length t: out[b, i, j] = sum_d q[b, i, d] * k[b, j, d],
/// with q and k (kBatch, t, dim) and out (kBatch, t, t); t appears as extents, as strides
/// (t * dim, t * t) and as t * t.
UOpRef scores(int64_t t, int64_t dim = kDim) {
  UOpRef out = global(0, dtypes::float32), q = global(1, dtypes::float32),
         k = global(2, dtypes::float32);
  UOpRef b = polygrad::range(idx(kBatch), 0), i = polygrad::range(idx(t), 1),
         j = polygrad::range(idx(t), 2), d = polygrad::range(idx(dim), 3);
  UOpRef qv = load(q, b * idx(t * dim) + i * idx(dim) + d);
  UOpRef kv = load(k, b * idx(t * dim) + j * idx(dim) + d);
  return sink({store(out, b * idx(t * t) + i * idx(t) + j, reduce(Op::ADD, qv * kv, {d}))});
}

bool always(const UOpRef&, const UOpRef&, int64_t) {
  return true;
}

TEST(SizeTemplates, OneGeneralKernelServesEverySequenceLength) {
  SizeTemplates templates;
  EXPECT_FALSE(templates.lookup(scores(6), always)) << "the first size is compiled in";
  std::optional<SizeMatch> m = templates.lookup(scores(7), always);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->value, 7);
  const Compiled general = compile(m->general);
  for (int64_t t : {7, 11, 2, 16, 33}) {
    std::optional<SizeMatch> mt = templates.lookup(scores(t), always);
    ASSERT_TRUE(mt) << "t " << t;
    EXPECT_EQ(mt->general, m->general) << "t " << t;
    EXPECT_EQ(mt->value, t);
    const std::vector<float> q = exact_ints(kBatch * t * kDim, t),
                             k = exact_ints(kBatch * t * kDim, t + 50);
    std::vector<HostBuf> bufs{HostBuf::zeros<float>(size_t(kBatch * t * t)), HostBuf::of(q),
                              HostBuf::of(k)};
    run(general, bufs, {{mt->var, mt->value}});
    const std::vector<float> got = bufs[0].as<float>();
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < t; ++j) {
          double want = 0;
          for (int64_t d = 0; d < kDim; ++d)
            want += double(q[(b * t + i) * kDim + d]) * k[(b * t + j) * kDim + d];
          ASSERT_EQ(got[(b * t + i) * t + j], want)
              << "t " << t << " at " << b << ", " << i << ", " << j;
        }
  }
}

TEST(SizeTemplates, TwoSizesChangingAtOnceAreCompiledIn) {
  SizeTemplates templates;
  EXPECT_FALSE(templates.lookup(scores(6, 4), always));
  // t and dim both change: the constants are no function of one size.
  EXPECT_FALSE(templates.lookup(scores(7, 3), always));
  EXPECT_FALSE(templates.lookup(scores(9, 6), always));
}

TEST(SizeTemplates, AKernelOffTheTemplateIsCompiledIn) {
  SizeTemplates templates;
  EXPECT_FALSE(templates.lookup(scores(6), always));
  ASSERT_TRUE(templates.lookup(scores(7), always));
  // The same structure, but dim differs from the template's fixed 5.
  EXPECT_FALSE(templates.lookup(scores(8, 6), always));
}

TEST(SizeTemplates, AGeneralKernelThatIsNotWorthwhileIsNeverUsed) {
  SizeTemplates templates;
  int asked = 0;
  auto never = [&](const UOpRef&, const UOpRef&, int64_t) {
    ++asked;
    return false;
  };
  EXPECT_FALSE(templates.lookup(scores(6), never));
  EXPECT_FALSE(templates.lookup(scores(7), never));
  EXPECT_FALSE(templates.lookup(scores(8), never));
  EXPECT_FALSE(templates.lookup(scores(12), always));
  EXPECT_EQ(asked, 1) << "decided once per structure";
}

// out[i] = in[i + t - 1] over t elements: an offset of the size (a cache's length before the
// newest entry). Two kernels fit any offset rule, so it takes a third.
TEST(SizeTemplates, AnOffsetOfTheSizeTakesAThirdKernel) {
  auto tail = [](int64_t t) {
    UOpRef i = polygrad::range(idx(t), 0);
    return sink(
        {store(global(0, dtypes::float32), i, load(global(1, dtypes::float32), i + idx(t - 1)))});
  };
  SizeTemplates templates;
  EXPECT_FALSE(templates.lookup(tail(6), always));
  EXPECT_FALSE(templates.lookup(tail(7), always));
  std::optional<SizeMatch> m = templates.lookup(tail(9), always);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->value, 9);
  const Compiled general = compile(m->general);
  std::optional<SizeMatch> m20 = templates.lookup(tail(20), always);
  ASSERT_TRUE(m20);
  EXPECT_EQ(m20->general, m->general);
  const std::vector<float> in = exact_ints(2 * 20, 3);
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(20), HostBuf::of(in)};
  run(general, bufs, {{m20->var, m20->value}});
  const std::vector<float> got = bufs[0].as<float>();
  for (int64_t i = 0; i < 20; ++i) ASSERT_EQ(got[i], in[i + 19]) << i;
}

TEST(SizeTemplates, AForgottenGeneralKernelServesNothing) {
  SizeTemplates templates;
  EXPECT_FALSE(templates.lookup(scores(6), always));
  std::optional<SizeMatch> m = templates.lookup(scores(7), always);
  ASSERT_TRUE(m);
  templates.forget(m->general);  // as when it failed to compile
  EXPECT_FALSE(templates.lookup(scores(9), always));
}

TEST(SizeTemplates, LoopIterationsCountEveryRange) {
  EXPECT_EQ(polygrad::runtime::loop_iterations(scores(6), {}), kBatch * 6 * 6 * kDim);
}

}  // namespace
}  // namespace polygrad_test
