#include "ir/uop.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "print.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

namespace polygrad {
namespace {

TEST(UOp, HashConsingGivesTheSameNode) {
  UOpRef x = define_var("x", 0, 10);
  UOpRef a = x + 1, b = x + 1;
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE((x + 2).get(), a.get());
  EXPECT_NE((const_int(dtypes::int32, 1)).get(), const_int(dtypes::int64, 1).get());
  EXPECT_EQ(const_float(dtypes::float32, 0.5).get(), const_float(dtypes::float32, 0.5).get());
  // Doubles compare by bits: -0.0 is another constant, NaN is itself.
  EXPECT_NE(const_float(dtypes::float32, 0.0).get(), const_float(dtypes::float32, -0.0).get());
  EXPECT_EQ(const_float(dtypes::float32, NAN).get(), const_float(dtypes::float32, NAN).get());
  EXPECT_EQ(a->op(), Op::ADD);
  EXPECT_EQ(a->src(0).get(), x.get());
  EXPECT_EQ(a->src(1)->arg_int(), 1);
}

TEST(UOp, ConstantsAreWrappedAndRounded) {
  EXPECT_EQ(const_int(dtypes::int8, 200)->arg_int(), -56);
  EXPECT_EQ(const_float(dtypes::float32, 0.1)->arg_float(), static_cast<double>(0.1f));
  EXPECT_EQ(const_float(dtypes::float16, 1.0 + 1.0 / 4096)->arg_float(), 1.0);  // below half ulp
  EXPECT_EQ(const_float(dtypes::float16, 70000.0)->arg_float(), INFINITY);
  EXPECT_EQ(const_float(dtypes::bfloat16, 1.0 + 1.0 / 512)->arg_float(), 1.0);
  EXPECT_EQ(const_float(dtypes::bfloat16, 1.0 + 3.0 / 256)->arg_float(), 1.0 + 1.0 / 64);
}

TEST(UOp, NodesAreFreedWithTheirLastReference) {
  size_t base = live_uop_count();
  {
    UOpRef x = define_var("freed_x", 0, 10);
    UOpRef e = x;
    for (int i = 0; i < 1000; ++i) e = e * 3 + i;
    EXPECT_GT(live_uop_count(), base + 1000);
  }
  EXPECT_EQ(live_uop_count(), base);
}

TEST(UOp, LongChainsAreFreedWithoutRecursion) {
  size_t base = live_uop_count();
  {
    UOpRef e = define_var("chain", 0, 1);
    for (int i = 0; i < 200000; ++i) e = -e;
  }
  EXPECT_EQ(live_uop_count(), base);
}

TEST(UOp, ThreadsBuildingTheSameGraphsShareNodes) {
  size_t base = live_uop_count();
  constexpr int kThreads = 4, kDepth = 2000;
  std::vector<UOpRef> roots(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&roots, t] {
      for (int round = 0; round < 20; ++round) {  // build, drop, rebuild: races make and free
        UOpRef e = define_var("shared", 0, 100);
        for (int i = 0; i < kDepth; ++i) e = (e + i) * 2;
        if (round == 19) roots[t] = e;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(roots[t].get(), roots[0].get());
  roots.clear();
  EXPECT_EQ(live_uop_count(), base);
}

TEST(UOp, ToposortPutsSourcesFirst) {
  UOpRef x = define_var("x", 0, 10);
  UOpRef y = x + x * 2;
  std::vector<const UOp*> order = toposort(y);
  ASSERT_EQ(order.size(), 4u);  // x, 2, x*2, y
  EXPECT_EQ(order.front(), x.get());
  EXPECT_EQ(order.back(), y.get());
}

TEST(UOp, ToposortOfSeveralRootsVisitsEachNodeOnce) {
  UOpRef x = define_var("x", 0, 10), y = define_var("y", 0, 10);
  UOpRef shared = x * 2;
  UOpRef a = shared + 1, b = shared + y;
  std::vector<const UOp*> order = toposort(std::vector<UOpRef>{a, b, shared});
  // x, 2, x*2, 1, a, y, b: the shared part once, each node after its sources
  ASSERT_EQ(order.size(), 7u);
  auto at = [&](const UOpRef& n) {
    return std::find(order.begin(), order.end(), n.get()) - order.begin();
  };
  for (const UOpRef& n : {x, y, shared, a, b})
    for (const UOpRef& s : n->srcs()) EXPECT_LT(at(s), at(n));
  EXPECT_LT(at(a), at(b));  // roots in the order given
  EXPECT_TRUE(toposort(std::vector<UOpRef>{}).empty());
}

TEST(UOp, SubstituteRebuildsUsers) {
  UOpRef x = define_var("x", 0, 10), y = define_var("y", 0, 10);
  UOpRef e = (x + 1) * x;
  UOpRef f = substitute(e, {{x.get(), y}});
  EXPECT_EQ(f.get(), ((y + 1) * y).get());
}

TEST(UOp, PrinterNumbersNodes) {
  UOpRef x = define_var("x", 0, 10);
  EXPECT_EQ(to_string(x + 3),
            "%0 = DEFINE_VAR int64 x[0..10]\n"
            "%1 = CONST int64 3\n"
            "%2 = ADD int64 (%0, %1)\n");
}

void expect_verify_error(const UOpRef& root, const std::string& fragment) {
  try {
    verify(root);
    FAIL() << "verify accepted " << to_string(root);
  } catch (const IrError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(UOp, VerifierCatchesBadNodes) {
  UOpRef i = const_int(dtypes::int32, 1);
  UOpRef f = const_float(dtypes::float32, 1.0);
  verify(i + i);
  verify(where(lt(i, i), f, f));
  expect_verify_error(UOp::make(Op::ADD, dtypes::int32, {i, f}), "ADD int32: source 1 has dtype");
  expect_verify_error(UOp::make(Op::ADD, dtypes::int32, {i}), "ADD int32: 1 sources, expected 2");
  expect_verify_error(UOp::make(Op::CMPLT, dtypes::int32, {i, i}), "CMPLT int32: result dtype");
  expect_verify_error(UOp::make(Op::SQRT, dtypes::int32, {i}), "SQRT int32: result dtype");
  expect_verify_error(UOp::make(Op::WHERE, dtypes::float32, {f, f, f}), "WHERE");
  expect_verify_error(UOp::make(Op::CONST, dtypes::float32, {}, int64_t{1}), "CONST float32");
  expect_verify_error(UOp::make(Op::LOAD, dtypes::float32, {f}), "LOAD float32: source 0");
  expect_verify_error(UOp::make(Op::PAD, dtypes::int32, {i, const_int(dtypes::index, 1)}),
                      "PAD int32: needs a (begin, end) pair");
  // An error deep in the graph is found through its users.
  expect_verify_error(
      UOp::make(Op::SINK, dtypes::void_, {UOp::make(Op::MOD, dtypes::float32, {f, f})}),
      "MOD float32");
}

TEST(UOp, SymbolicShapesAreSources) {
  UOpRef buf = UOp::make(Op::BUFFER, dtypes::float32, {}, std::vector<int64_t>{1, 64});
  UOpRef n = define_var("n", 1, 64);
  UOpRef r = UOp::make(Op::RESHAPE, dtypes::float32, {buf, n, const_int(dtypes::index, 1)});
  verify(r);
  expect_verify_error(UOp::make(Op::RESHAPE, dtypes::float32, {buf, const_int(dtypes::int32, 4)}),
                      "RESHAPE float32: source 1 has dtype int32");
}

}  // namespace
}  // namespace polygrad
