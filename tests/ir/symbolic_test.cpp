#include "expr_gen.hpp"
#include "ir/graph.hpp"
#include "print.hpp"
#include "symbolic/bounds.hpp"
#include "symbolic/fold.hpp"
#include "symbolic/simplify.hpp"

#include <gtest/gtest.h>

#include <random>

namespace polygrad {
namespace {

UOpRef i32(int64_t v) {
  return const_int(dtypes::int32, v);
}
UOpRef x() {
  return define_var("x", 0, 9, dtypes::int32);
}
UOpRef y() {
  return define_var("y", 0, 99, dtypes::int32);
}
UOpRef s() {
  return define_var("s", -5, 5, dtypes::int32);
}

struct Case {
  const char* what;
  UOpRef in, want;
};

void run_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    UOpRef got = simplify(c.in);
    EXPECT_EQ(got, c.want) << c.what << "\ninput:\n"
                           << to_string(c.in) << "got:\n"
                           << to_string(got);
  }
}

TEST(Symbolic, ConstantFolding) {
  run_cases({
      {"2+3", i32(2) + i32(3), i32(5)},
      {"int32 wrap", i32(2147483647) + i32(1), i32(-2147483648LL)},
      {"trunc div", i32(-7) / i32(2), i32(-3)},
      {"mod sign", i32(-7) % i32(2), i32(-1)},
      {"INT_MIN/-1 wraps", i32(-2147483648LL) / i32(-1), i32(-2147483648LL)},
      {"uint8 wrap", const_int(dtypes::uint8, 250) + const_int(dtypes::uint8, 10),
       const_int(dtypes::uint8, 4)},
      {"uint32 compare", lt(const_int(dtypes::uint32, -1), const_int(dtypes::uint32, 1)),
       const_bool(false)},
      {"float32 add", const_float(dtypes::float32, 0.1) + const_float(dtypes::float32, 0.2),
       const_float(dtypes::float32, static_cast<double>(0.1f + 0.2f))},
      {"float max nan", max(const_float(dtypes::float32, NAN), const_float(dtypes::float32, 1)),
       const_float(dtypes::float32, NAN)},
      {"where const", where(const_bool(true), x(), y()), x()},
      {"shift", alu(Op::SHL, {i32(1), i32(4)}), i32(16)},
  });
  // Undefined results are left alone.
  UOpRef div0 = i32(1) / i32(0);
  EXPECT_EQ(simplify(div0), div0);
  UOpRef shl = alu(Op::SHL, {i32(1), i32(40)});
  EXPECT_EQ(simplify(shl), shl);
}

// Every op fold_alu knows, on operands whose results are exact (hand-derived expectations).
TEST(Symbolic, ConstantFoldingEveryOp) {
  auto f32 = [](double v) { return const_float(dtypes::float32, v); };
  auto u64 = [](int64_t v) { return const_int(dtypes::uint64, v); };
  run_cases({
      {"float neg", -f32(1.5), f32(-1.5)},
      {"float recip", alu(Op::RECIP, {f32(4)}), f32(0.25)},
      {"float sqrt", alu(Op::SQRT, {f32(16)}), f32(4)},
      {"float exp2", alu(Op::EXP2, {f32(3)}), f32(8)},
      {"float log2", alu(Op::LOG2, {f32(8)}), f32(3)},
      {"float sin", alu(Op::SIN, {f32(0)}), f32(0)},
      {"float trunc", alu(Op::TRUNC, {f32(-2.75)}), f32(-2)},
      {"float sub", f32(1) - f32(2.5), f32(-1.5)},
      {"float mul", f32(1.5) * f32(-4), f32(-6)},
      {"float fdiv", f32(1) / f32(8), f32(0.125)},
      {"float max", max(f32(-1), f32(2)), f32(2)},
      {"float mulacc", alu(Op::MULACC, {f32(2), f32(3), f32(0.5)}), f32(6.5)},
      {"float lt", lt(f32(1.5), f32(2)), const_bool(true)},
      {"float ne", ne(f32(2), f32(2)), const_bool(false)},
      {"float eq", eq(f32(2), f32(2)), const_bool(true)},
      {"int neg", -i32(5), i32(-5)},
      {"int not", alu(Op::NOT, {i32(5)}), i32(-6)},
      {"bool not", alu(Op::NOT, {const_bool(true)}), const_bool(false)},
      {"int sub", i32(3) - i32(10), i32(-7)},
      {"int mul wrap", i32(65536) * i32(65536), i32(0)},
      {"int max", max(i32(-3), i32(2)), i32(2)},
      {"int and", alu(Op::AND, {i32(6), i32(3)}), i32(2)},
      {"int or", alu(Op::OR, {i32(6), i32(3)}), i32(7)},
      {"int xor", alu(Op::XOR, {i32(6), i32(3)}), i32(5)},
      {"int shr arithmetic", alu(Op::SHR, {i32(-16), i32(2)}), i32(-4)},
      {"int mulacc", alu(Op::MULACC, {i32(2), i32(3), i32(4)}), i32(10)},
      {"int ne", ne(i32(2), i32(3)), const_bool(true)},
      {"int eq", eq(i32(2), i32(3)), const_bool(false)},
      {"uint64 max / 2", u64(-1) / u64(2), u64(INT64_MAX)},
      {"uint64 max % 10", u64(-1) % u64(10), u64(5)},
      {"uint64 max > 1", lt(u64(1), u64(-1)), const_bool(true)},
      {"where all const", where(const_bool(false), i32(1), i32(2)), i32(2)},
  });
}

TEST(Symbolic, Identities) {
  run_cases({
      {"x+0", x() + 0, x()},
      {"0+x", i32(0) + x(), x()},
      {"x*1", x() * 1, x()},
      {"x*0", x() * 0, i32(0)},
      {"x-x", x() - x(), i32(0)},
      {"x//1", x() / 1, x()},
      {"x%1", x() % 1, i32(0)},
      {"max(x,x)", max(x(), x()), x()},
      {"where(c,x,x)", where(lt(x(), y()), y(), y()), y()},
  });
}

TEST(Symbolic, Reassociation) {
  run_cases({
      {"(x+1)+2", (x() + 1) + 2, x() + 3},
      {"(x*2)*3", (x() * 2) * 3, x() * 6},
      {"2+x", i32(2) + x(), x() + 2},
      {"x+x", x() + x(), x() * 2},
      {"x*2+x*3", x() * 2 + x() * 3, x() * 5},
      {"(x+y)-x", (x() + y()) - x(), y()},
      {"(x+1)*3", (x() + 1) * 3, x() * 3 + 3},
      {"(x+1)+(y+2)", (x() + 1) + (y() + 2), (y() + x()) + 3},
      {"(x+y)*3", (x() + y()) * 3, x() * 3 + y() * 3},
  });
}

TEST(Symbolic, DivModWithBounds) {
  run_cases({
      {"x//10 in [0,9]", x() / 10, i32(0)},
      {"x%10 in [0,9]", x() % 10, x()},
      {"(y*10+x)//10", (y() * 10 + x()) / 10, y()},
      {"(y*10+x)%10", (y() * 10 + x()) % 10, x()},
      {"(x*4)//2", (x() * 4) / 2, x() * 2},
      {"(y//2)//5", (y() / 2) / 5, y() / 10},
      {"(y%12)%4", (y() % 12) % 4, y() % 4},
      {"y//8*8 + y%8", (y() / 8) * 8 + y() % 8, y()},
      {"(x+20)%10 -> x+0..", (x() + 20) % 10, x()},
      {"s%10 may be negative", s() % 10, s() % 10},
      {"(s*10+x)//10 not split: s<0", (s() * 10 + x()) / 10, (s() * 10 + x()) / 10},
      // A divisor that is a multiple of the stride: merged rows read through a reshape.
      {"(y*10+x)//20", (y() * 10 + x()) / 20, y() / 2},
      {"(y*10+x)%20", (y() * 10 + x()) % 20, y() % 2 * 10 + x()},
      {"(x*4+y)//8 kept: y may reach 4", (x() * 4 + y()) / 8, (x() * 4 + y()) / 8},
      {"(s*10+x)//20 kept: s<0", (s() * 10 + x()) / 20, (s() * 10 + x()) / 20},
      {"y//8*24 + y%8*3", (y() / 8) * 24 + (y() % 8) * 3, y() * 3},
      {"y//8*20 + y%8*3 kept", (y() / 8) * 20 + (y() % 8) * 3, (y() / 8) * 20 + (y() % 8) * 3},
  });
  // Sums of several non-negative terms (a batched matmul's index through reshapes): the terms a
  // divisor's factor divides make the quotient, the rest the remainder.
  const UOpRef z = define_var("z", 0, 31, dtypes::int32);
  const UOpRef sum = y() * 320 + x() * 32 + z;
  run_cases({
      {"(y*320+x*32+z)//320", sum / 320, y()},
      {"(y*320+x*32+z)%320", sum % 320, x() * 32 + z},
      {"(y*320+x*32+z)//32", sum / 32, y() * 10 + x()},
      {"(y*320+x*32+z)%32", sum % 32, z},
      {"(y*320+x*32+z)//64", sum / 64, y() * 5 + x() / 2},
      {"(y*320+x*32+z)%64", sum % 64, x() % 2 * 32 + z},
      {"(y*320+x*32+s)//32 kept: s<0", (y() * 320 + x() * 32 + s()) / 32,
       (y() * 320 + x() * 32 + s()) / 32},
  });
  // A coefficient larger than the divisor counts with its quotient and remainder: the index of
  // a pooling view built by repeating an axis of n and reading it as rows of n + 2.
  const UOpRef a = define_var("a", 0, 2, dtypes::int32), w = define_var("w", 0, 5, dtypes::int32);
  run_cases({
      {"(a*12+w)%10", (a * 12 + w) % 10, a * 2 + w},
      {"(a*12+w)//10", (a * 12 + w) / 10, a},
      {"(a*11+w+2)%10", (a * 11 + w + 2) % 10, (a + w) + 2},
      {"(x*12+w)%10 kept: x*2+w may reach 10", (x() * 12 + w) % 10, (x() * 12 + w) % 10},
  });
  // A negative constant in a sum that stays non-negative (a padded view's index where its gate
  // holds) splits rounding down: 9*p - 25 = 9*(p - 3) + 2.
  const UOpRef p = define_var("p", 3, 40, dtypes::int32);
  run_cases({
      {"(p*9-25)//9", (p * 9 + i32(-25)) / 9, p + i32(-3)},
      {"(p*9-25)%9", (p * 9 + i32(-25)) % 9, i32(2)},
      {"(p*9+w-25)//18", (p * 9 + w + i32(-25)) / 18, (p + i32(-3)) / 2},
      {"(x*9-25)//9 kept: may be negative", (x() * 9 + i32(-25)) / 9, (x() * 9 + i32(-25)) / 9},
  });
  // The digits of a mixed-radix number put back together anywhere in a sum (an index through
  // reshapes that split an axis and merge it again).
  run_cases({
      {"z + y//8*24 + y%8*3", z + (y() / 8) * 24 + (y() % 8) * 3, z + y() * 3},
      {"y%8 + z + y//8*8", y() % 8 + z + (y() / 8) * 8, y() + z},
      {"y//32*96 + (y//4)%8*12 + y%4*3", (y() / 32) * 96 + ((y() / 4) % 8) * 12 + (y() % 4) * 3,
       y() * 3},
      {"(y%32)//4*12 + z + y%4*3", ((y() % 32) / 4) * 12 + z + (y() % 4) * 3, (y() % 32) * 3 + z},
      {"y//9*18 + ((y//3)%3*3 + y%3)*2", (y() / 9) * 18 + (((y() / 3) % 3) * 3 + y() % 3) * 2,
       y() * 2},
      {"z + y//8*20 + y%8*3 kept", z + (y() / 8) * 20 + (y() % 8) * 3,
       z + (y() / 8) * 20 + (y() % 8) * 3},
  });
}

TEST(Symbolic, ComparisonsFromBounds) {
  run_cases({
      {"x<10", lt(x(), i32(10)), const_bool(true)},
      {"x<0", lt(x(), i32(0)), const_bool(false)},
      {"x<5", lt(x(), i32(5)), lt(x(), i32(5))},
      {"x!=20", ne(x(), i32(20)), const_bool(true)},
      {"x==y+10", eq(x(), y() + 10), const_bool(false)},
  });
}

TEST(Symbolic, Bounds) {
  EXPECT_EQ(*bounds(x() * 3 + 1), (Bounds{1, 28}));
  EXPECT_EQ(*bounds(s() * s()), (Bounds{-25, 25}));
  EXPECT_EQ(*bounds(s() / 2), (Bounds{-2, 2}));
  EXPECT_EQ(*bounds(y() % 7), (Bounds{0, 6}));
  EXPECT_EQ(*bounds(s() % 3), (Bounds{-2, 2}));
  EXPECT_EQ(*bounds(range(const_int(dtypes::index, 16), 0)), (Bounds{0, 15}));
  // Possible overflow: the whole dtype.
  UOpRef big = define_var("big", 0, 2000000000, dtypes::int32);
  EXPECT_EQ(*bounds(big * 2), (Bounds{-2147483648LL, 2147483647LL}));
  EXPECT_FALSE(bounds(const_float(dtypes::float32, 1.0)));
  EXPECT_FALSE(bounds(const_int(dtypes::uint64, 1)));
}

// Random expressions: simplify must not change the value at any point, and bounds must contain
// every value the expression takes.
TEST(Symbolic, RandomExpressionsKeepTheirValue) {
  std::mt19937 rng(1234);
  int simplified_smaller = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> bytes(64);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    testing::ByteSource src(bytes.data(), bytes.size());
    UOpRef e = testing::gen_expr(src, 4);
    UOpRef s = simplify(e);
    verify(s);
    if (toposort(s).size() < toposort(e).size()) ++simplified_smaller;
    auto be = bounds(e), bs = bounds(s);
    ASSERT_TRUE(be && bs);
    for (int p = 0; p < 8; ++p) {
      std::map<std::string, int64_t> env;
      for (const auto& v : testing::kVars)
        env[v.name] = v.lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(v.hi - v.lo + 1));
      int64_t want = testing::eval_expr(*e, env), got = testing::eval_expr(*s, env);
      ASSERT_EQ(got, want) << "input:\n" << to_string(e) << "simplified:\n" << to_string(s);
      ASSERT_TRUE(be->lo <= want && want <= be->hi) << to_string(e);
      ASSERT_TRUE(bs->lo <= got && got <= bs->hi) << to_string(s);
    }
  }
  EXPECT_GT(simplified_smaller, 100);
}

}  // namespace
}  // namespace polygrad
