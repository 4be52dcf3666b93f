// Construction, properties, realisation and host transfer: hand-derived values.
#include "harness.hpp"

#include <cmath>
#include <set>

namespace {

using polygrad::Tensor;
using tensor_test::expect_values;

TEST(Construction, FromDataOfEachType) {
  expect_values(Tensor(std::vector<double>{1.5, -2}, {2, 1}), {2, 1}, {1.5, -2});
  Tensor i(std::vector<int64_t>{7, -8, 9});
  EXPECT_EQ(i.dtype(), PG_DTYPE_INT64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{7, -8, 9}));
  Tensor u(std::vector<uint8_t>{0, 255});
  EXPECT_EQ(u.to_vector<int32_t>(), (std::vector<int32_t>{0, 255}));
  Tensor b(std::vector<bool>{true, false, true});
  EXPECT_EQ(b.dtype(), PG_DTYPE_BOOL);
  EXPECT_EQ(b.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
  int32_t raw[6] = {1, 2, 3, 4, 5, 6};
  Tensor h = Tensor::from_host(raw, PG_DTYPE_INT32, {3, 2});
  EXPECT_EQ(h.shape(), (Tensor::Shape{3, 2}));
  EXPECT_EQ(h.T().to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 5, 2, 4, 6}));
}

TEST(Construction, HostBytesAsBoolAreZeroOrOne) {
  // Any nonzero host byte is true, as numpy reads a uint8 buffer viewed as bool: it arrives as
  // 1 (a kernel reads a bool as the byte 0 or 1; a 2 would come back as 2).
  const uint8_t raw[5] = {0, 1, 2, 255, 0};
  Tensor b = Tensor::from_host(raw, PG_DTYPE_BOOL, {5});
  EXPECT_EQ(b.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 1, 0}));
}

TEST(Construction, Fills) {
  expect_values(Tensor::zeros({2, 2}), {2, 2}, {0, 0, 0, 0});
  expect_values(Tensor::ones({3}), {3}, {1, 1, 1});
  Tensor f = Tensor::full({2}, 7, PG_DTYPE_INT32);
  EXPECT_EQ(f.dtype(), PG_DTYPE_INT32);
  EXPECT_EQ(f.to_vector<int32_t>(), (std::vector<int32_t>{7, 7}));
  Tensor s = Tensor::scalar(2.5);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_FLOAT_EQ(s.item(), 2.5f);
  Tensor e = Tensor::empty({4, 5}, PG_DTYPE_FLOAT64);
  EXPECT_EQ(e.shape(), (Tensor::Shape{4, 5}));
  EXPECT_EQ(e.dtype(), PG_DTYPE_FLOAT64);
  EXPECT_EQ(Tensor::full_like(f, 3).to_vector<int32_t>(), (std::vector<int32_t>{3, 3}));
}

// Without a dtype, full takes its value's, as tinygrad's Tensor.full: int32 for an int (int64
// past int32), bool for a bool, float32 for a float. An int fill gave float32.
TEST(Construction, FullWithoutADtypeTakesTheValues) {
  Tensor i = Tensor::full({2, 2}, 3);
  EXPECT_EQ(i.dtype(), PG_DTYPE_INT32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{3, 3, 3, 3}));
  Tensor big = Tensor::full({1}, int64_t{1} << 40);
  EXPECT_EQ(big.dtype(), PG_DTYPE_INT64);
  EXPECT_EQ(big.to_vector<int64_t>(), (std::vector<int64_t>{int64_t{1} << 40}));
  Tensor b = Tensor::full({2}, true);
  EXPECT_EQ(b.dtype(), PG_DTYPE_BOOL);
  EXPECT_EQ(b.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1}));
  Tensor f = Tensor::full({}, 3.5);
  EXPECT_EQ(f.dtype(), PG_DTYPE_FLOAT32);
  EXPECT_EQ(f.item<float>(), 3.5f);
  EXPECT_EQ(Tensor::full({1}, 3.0).dtype(), PG_DTYPE_FLOAT32);  // (a float, though whole)
}

TEST(Construction, Ranges) {
  Tensor a = Tensor::arange(5);
  EXPECT_EQ(a.dtype(), PG_DTYPE_INT32);
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  Tensor f = Tensor::arange(1, 2, 0.25);
  EXPECT_EQ(f.dtype(), PG_DTYPE_FLOAT32);
  expect_values(f, {4}, {1, 1.25, 1.5, 1.75});
  EXPECT_EQ(Tensor::arange(5, 0, -2).to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 1}));
  expect_values(Tensor::linspace(0, 1, 5), {5}, {0, 0.25, 0.5, 0.75, 1});
  expect_values(Tensor::linspace(3, 9, 1), {1}, {3});
  expect_values(Tensor::eye(3), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  expect_values(Tensor::eye(2, 3), {2, 3}, {1, 0, 0, 0, 1, 0});
}

// An integer dtype with a fractional step or bound, as torch's (its values, torch 2.x):
// arange(0, 5, 1.5, dtype=int32) is [0, 1, 2, 3] and int64 [0, 1, 2, 3, 4]; a step that
// truncates to 0 is an error.
TEST(Construction, IntegerRangesOfFractionalSteps) {
  auto ints = [](double a, double b, double s, pg_dtype t) {
    return Tensor::arange(a, b, s, t).cast(PG_DTYPE_INT64).to_vector<int64_t>();
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(ints(0, 5, 1.5, PG_DTYPE_INT32), (V{0, 1, 2, 3}));
  EXPECT_EQ(ints(0, 5, 1.5, PG_DTYPE_INT64), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(ints(0, 5, 1.5, PG_DTYPE_UINT8), (V{0, 1, 2, 3}));
  EXPECT_EQ(ints(0.9, 5.5, 1.3, PG_DTYPE_INT32), (V{0, 1, 2, 3}));
  EXPECT_EQ(ints(0.9, 5.5, 1.3, PG_DTYPE_INT64), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(ints(0.5, 5, 1, PG_DTYPE_INT32), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(ints(0, -3, -1.5, PG_DTYPE_INT32), (V{0, -1}));
  EXPECT_EQ(ints(0, -3, -1.5, PG_DTYPE_INT64), (V{0, -1, -2}));
  EXPECT_EQ(ints(0, -3, -1.5, PG_DTYPE_UINT8), (V{0, 255}));
  EXPECT_EQ(Tensor::arange(0, 5, 1.5, PG_DTYPE_INT32).dtype(), PG_DTYPE_INT32);
  EXPECT_THROW(Tensor::arange(0, 5, 0.5, PG_DTYPE_INT32), polygrad::Error);
  expect_values(Tensor::arange(0, 5, 1.5, PG_DTYPE_FLOAT32), {4}, {0, 1.5, 3, 4.5});
}

TEST(Random, SeededUniform) {
  Tensor::manual_seed(42);
  std::vector<float> a = Tensor::rand({1000}).to_vector<float>();
  std::vector<float> b = Tensor::rand({1000}).to_vector<float>();
  Tensor::manual_seed(42);
  std::vector<float> c = Tensor::rand({1000}).to_vector<float>();
  EXPECT_EQ(a, c);  // same seed, same values
  EXPECT_NE(a, b);  // the counter moves on
  double sum = 0;
  for (float v : a) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / 1000, 0.5, 0.05);
}

TEST(Random, NormalMoments) {
  Tensor::manual_seed(7);
  Tensor x = Tensor::randn({20000});
  EXPECT_NEAR(x.mean().item(), 0.0, 0.03);
  EXPECT_NEAR(x.std().item(), 1.0, 0.03);
}

TEST(Random, IntegersCoverTheRange) {
  Tensor::manual_seed(3);
  Tensor r = Tensor::randint(-2, 3, {500});
  EXPECT_EQ(r.dtype(), PG_DTYPE_INT32);
  std::set<int32_t> seen;
  for (int32_t v : r.to_vector<int32_t>()) {
    EXPECT_GE(v, -2);
    EXPECT_LT(v, 3);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 5u);
}

TEST(Properties, ShapeAndSizes) {
  Tensor x = Tensor::zeros({2, 3, 4});
  EXPECT_EQ(x.ndim(), 3);
  EXPECT_EQ(x.numel(), 24);
  EXPECT_EQ(x.size(-1), 4);
  EXPECT_EQ(x.size(0), 2);
  EXPECT_EQ(x.element_size(), 4);
  EXPECT_EQ(x.T().shape(), (Tensor::Shape{2, 4, 3}));
  EXPECT_EQ(x.device(), "cpu:0");
  EXPECT_EQ(polygrad::dtype_name(x.dtype()), "float32");
  EXPECT_FALSE(Tensor().defined());
}

TEST(Realize, LazyUntilAsked) {
  Tensor a(std::vector<float>{1, 2});
  EXPECT_TRUE(a.is_realized());
  Tensor b = a * 2 + 1;
  EXPECT_FALSE(b.is_realized());
  b.realize();
  EXPECT_TRUE(b.is_realized());
  expect_values(b, {2}, {3, 5});
  std::vector<Tensor> many{a + 1, a - 1, a};
  Tensor::realize_all(many);
  for (const Tensor& t : many) EXPECT_TRUE(t.is_realized());
  expect_values(many[0], {2}, {2, 3});
  expect_values(many[1], {2}, {0, 1});
}

TEST(Realize, CopiesAndViews) {
  Tensor a(std::vector<float>{1, 2, 3});
  expect_values(a.detach(), {3}, {1, 2, 3});
  expect_values(a.contiguous(), {3}, {1, 2, 3});
  Tensor c = a.clone();
  expect_values(c, {3}, {1, 2, 3});
  Tensor p(std::vector<float>{4});
  p.requires_grad(true);
  EXPECT_TRUE(p.clone().requires_grad());
  Tensor moved = a.to("cpu");
  EXPECT_EQ(moved.device(), "cpu:0");
  expect_values(moved, {3}, {1, 2, 3});
  float host[3];
  (a * 10).copy_to_host(host, sizeof(host));
  EXPECT_EQ(host[2], 30.0f);
}

TEST(Realize, AssignWritesTheBuffer) {
  Tensor a(std::vector<float>{1, 2, 3});
  Tensor alias = a;  // the same tensor
  a.assign(a * 2);
  expect_values(alias, {3}, {2, 4, 6});
  a.assign(Tensor::scalar(5));  // broadcast
  expect_values(a, {3}, {5, 5, 5});
}

TEST(Realize, AssignRunsOnce) {
  Tensor a(std::vector<float>{1, 2, 3});
  a.assign(a * 2);
  Tensor b = a + 1;
  expect_values(b, {3}, {3, 5, 7});  // runs the write as part of b's graph
  a.realize();                       // must not write a second time
  expect_values(a, {3}, {2, 4, 6});
}

TEST(Realize, AGraphHoldingARunAssignReadsItsTarget) {
  // Values built from a tensor while its assign was pending hold that ASSIGN; once it has run,
  // they read the target instead of running it again over the new contents (torch: 4, 8, 7).
  Tensor p(std::vector<float>{1, 1});
  p.assign(p * 3);
  p.assign(p + 1);  // (p + 1 holds the first assign, which runs before this one)
  expect_values(p, {2}, {4, 4});
  Tensor m(std::vector<float>{1});
  for (int i = 0; i < 3; ++i) m.assign(m * 2);
  expect_values(m, {1}, {8});
  // An optimizer's pattern: p's update reads m's pending one, and m is realised first.
  Tensor m2(std::vector<float>{1}), p2(std::vector<float>{10});
  m2.assign(m2 * 2 + 1);
  p2.assign(p2 - m2);
  m2.realize();
  expect_values(m2, {1}, {3});
  expect_values(p2, {1}, {7});
  expect_values(m2, {1}, {3});  // p2's realisation did not write m2 again
}

TEST(Realize, TheSameUpdateEveryStepRunsEveryStep) {
  // An optimizer's step builds the same graph each time: each assign still runs once per call
  // (a = 0.5^k, q = 1 - 0.5^k), its state read by nothing in between.
  Tensor a(std::vector<float>{1}), q(std::vector<float>{0});
  for (int k = 1; k <= 4; ++k) {
    a.assign(a * 0.5);
    q.assign(q + a);
    std::vector<Tensor> both{q, a};
    Tensor::realize_all(both);
    expect_values(a, {1}, {std::ldexp(1.0, -k)});
    expect_values(q, {1}, {1.0 - std::ldexp(1.0, -k)});
  }
}

TEST(Realize, AnAssignReadingAPendingOneRunsAfterIt) {
  // a <- b, then b <- a: torch's copies in order leave both at b's old value.
  Tensor a(std::vector<float>{1, 1}), b(std::vector<float>{2, 2});
  a.assign(b);
  b.assign(a);
  std::vector<Tensor> both{a, b};
  Tensor::realize_all(both);
  expect_values(a, {2}, {2, 2});
  expect_values(b, {2}, {2, 2});
}

}  // namespace

namespace {

TEST(Realize, AssignsInOneCallReadOldValues) {
  // a <- a + b and b <- b - a read each other's old contents: both see the values before.
  Tensor a(std::vector<float>{1, 2}), b(std::vector<float>{10, 20});
  Tensor va = a + b, vb = b - a;
  a.assign(va);
  b.assign(vb);
  std::vector<Tensor> all{a, b, va * 0 + 1};
  Tensor::realize_all(all);
  expect_values(a, {2}, {11, 22});
  expect_values(b, {2}, {9, 18});
  expect_values(all[2], {2}, {1, 1});
}

// Two pending assigns to one tensor are a chain written in order: a value built before the
// first reads the old contents, one built between them the first write's, when all are
// realised together (the second assign used to run the first at once, so the value built
// before it read the write: e gave 3, 5, 7).
TEST(Realize, AChainOfPendingAssignsKeepsEachReadersVersion) {
  Tensor t(std::vector<float>{1, 2, 3});
  t.realize();
  Tensor before = t + 1;
  t.assign(t * 2);
  Tensor between = t + 1;
  t.assign(t + 10);
  std::vector<Tensor> all{before, between, t};
  Tensor::realize_all(all);
  expect_values(before, {3}, {2, 3, 4});
  expect_values(between, {3}, {3, 5, 7});
  expect_values(t, {3}, {12, 14, 16});
  // A long chain runs its oldest writes first beyond 64 pending ones, and still adds up.
  Tensor c(std::vector<float>{0, 1});
  c.realize();
  for (int i = 0; i < 200; ++i) c.assign(c + 1);
  expect_values(c, {2}, {200, 201});
}

}  // namespace
