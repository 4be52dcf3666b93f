#include "ir/error.hpp"
#include "print.hpp"
#include "rewrite/graph_rewrite.hpp"

#include <gtest/gtest.h>

namespace polygrad {
namespace {

UOpRef i32(int64_t v) {
  return const_int(dtypes::int32, v);
}
UOpRef var32(const char* name) {
  return define_var(name, 0, 100, dtypes::int32);
}

const RuleSet& identities() {
  static const RuleSet set =
      RuleSet("identities") |
      rule(var("x") + cconst(0), [](Match& m) { return m["x"]; })     // x+0 -> x
      | rule(var("x") * cconst(1), [](Match& m) { return m["x"]; });  // x*1 -> x
  return set;
}

TEST(Rewrite, CommutativeMatchesBothOrders) {
  UOpRef x = var32("x");
  EXPECT_EQ(identities().rewrite(x + i32(0)), x);
  EXPECT_EQ(identities().rewrite(i32(0) + x), x);
  EXPECT_EQ(identities().rewrite(x * i32(1)), x);
  EXPECT_FALSE(identities().rewrite(x - i32(0)));
  // cconst compares numbers: a float 0.0 matches too.
  UOpRef f = UOp::make(Op::DEFINE_VAR, dtypes::float32, {}, Var{"f", 0, 0});
  EXPECT_EQ(identities().rewrite(f + const_float(dtypes::float32, 0.0)), f);
}

TEST(Rewrite, RepeatedBindingMustBeTheSameNode) {
  RuleSet set =
      RuleSet("sub") | rule(var("x") - var("x"), [](Match& m) { return const_like(m["x"], 0); });
  UOpRef x = var32("x"), y = var32("y");
  EXPECT_EQ(set.rewrite(x - x), i32(0));
  EXPECT_FALSE(set.rewrite(x - y));
}

TEST(Rewrite, CommutativeBindingsBacktrack) {
  // x*y + y: the second order of the MUL is needed to bind y consistently.
  RuleSet set =
      RuleSet("fma") | rule(var("x") * var("y") + var("y"), [](Match& m) { return m["x"] + 1; });
  UOpRef a = var32("a"), b = var32("b");
  EXPECT_EQ(set.rewrite(a * b + a), b + 1);
  EXPECT_EQ(set.rewrite(a * b + b), a + 1);
}

bool is_small_const(const UOp& u) {
  return u.op() == Op::CONST && u.arg_int() < 10;
}

TEST(Rewrite, PredicatesDtypesAndArgs) {
  RuleSet set =
      RuleSet("preds") |
      rule(var("x") * cvar("c").where(is_small_const), [](Match& m) { return m["x"]; }) |
      rule(pat(Op::NEG, {var("x")}).dtype(dtypes::int64), [](Match& m) { return m["x"]; }) |
      rule(pat(Op::DEFINE_VAR).arg(Var{"z", 0, 1}), [](Match&) { return i32(7); });
  UOpRef x = var32("x");
  EXPECT_EQ(set.rewrite(x * i32(3)), x);
  EXPECT_FALSE(set.rewrite(x * i32(30)));
  EXPECT_FALSE(set.rewrite(-x));  // int32, not int64
  UOpRef y = define_var("y", 0, 5);
  EXPECT_EQ(set.rewrite(-y), y);
  EXPECT_EQ(set.rewrite(define_var("z", 0, 1, dtypes::int32)), i32(7));
  EXPECT_FALSE(set.rewrite(define_var("z", 0, 2, dtypes::int32)));
}

TEST(Rewrite, RepeatedSources) {
  RuleSet set = RuleSet("sink") | rule(pat(Op::SINK).repeat(cvar()),
                                       [](Match&) { return UOp::make(Op::SINK, dtypes::void_); });
  UOpRef empty = UOp::make(Op::SINK, dtypes::void_);
  EXPECT_EQ(set.rewrite(UOp::make(Op::SINK, dtypes::void_, {i32(1), i32(2), i32(3)})), empty);
  EXPECT_FALSE(set.rewrite(UOp::make(Op::SINK, dtypes::void_, {i32(1), var32("x")})));
}

TEST(Rewrite, DecliningFunctionLetsLaterRulesTry) {
  RuleSet set = RuleSet("decline") | rule(var("x") + var("y"), [](Match&) { return UOpRef(); }) |
                rule(var("x") + var("y"), [](Match& m) { return m["x"] * m["y"]; });
  UOpRef a = var32("a"), b = var32("b");
  EXPECT_EQ(set.rewrite(a + b), a * b);
}

TEST(Rewrite, ComposedSetsKeepOrderAndName) {
  RuleSet a = RuleSet("a") | rule(var("x") + cconst(0), [](Match&) { return i32(1); });
  RuleSet b = RuleSet("b") | rule(var("x") + cconst(0), [](Match&) { return i32(2); });
  RuleSet ab = a + b;
  EXPECT_EQ(ab.name(), "a+b");
  EXPECT_EQ(ab.size(), 2u);
  EXPECT_EQ(ab.rewrite(var32("x") + i32(0)), i32(1));
  EXPECT_EQ((b + a).rewrite(var32("x") + i32(0)), i32(2));
}

TEST(Rewrite, MissingBindingNamesTheRule) {
  RuleSet set = RuleSet("bad") | rule(var("x") + cconst(0), [](Match& m) { return m["y"]; });
  try {
    set.rewrite(var32("x") + i32(0));
    FAIL();
  } catch (const IrError& e) {
    EXPECT_NE(std::string(e.what()).find("rewrite_test.cpp"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos) << e.what();
  }
}

TEST(GraphRewrite, BottomUpReachesAFixedPoint) {
  UOpRef x = var32("x");
  // ((x*1)+0)*1 + 0 -> x, each step exposing the next.
  UOpRef e = ((x * i32(1) + i32(0)) * i32(1)) + i32(0);
  EXPECT_EQ(graph_rewrite(e, identities()), x);
  // A rewrite result that needs further rewriting: fold c1+c2 made by another rule.
  RuleSet fold =
      RuleSet("fold") |
      rule(cvar("a") + cvar("b"),
           [](Match& m) { return i32(m["a"]->arg_int() + m["b"]->arg_int()); }) |
      rule((var("x") + cvar("a")) + cvar("b"), [](Match& m) { return m["x"] + (m["a"] + m["b"]); });
  EXPECT_EQ(graph_rewrite(((x + i32(1)) + i32(2)) + i32(3), fold), x + i32(6));
}

int times_one_fired = 0;  // (rules take plain function pointers)

TEST(GraphRewrite, ARewriterSharesWorkBetweenRoots) {
  // x*1 + 0 under two roots: rewritten once for both, each root as graph_rewrite gives it.
  RuleSet counted = RuleSet("counted") |
                    rule(var("x") * cconst(1),
                         [](Match& m) {
                           ++times_one_fired;
                           return m["x"];
                         }) |
                    rule(var("x") + cconst(0), [](Match& m) { return m["x"]; });
  UOpRef x = var32("x"), y = var32("y");
  UOpRef shared = x * i32(1) + i32(0);
  UOpRef first = (shared + y) * i32(1), second = shared * y;
  times_one_fired = 0;
  EXPECT_EQ(graph_rewrite(first, counted), x + y);
  EXPECT_EQ(graph_rewrite(second, counted), x * y);
  EXPECT_EQ(times_one_fired, 3);  // x*1 and the outer *1 for the first root, x*1 again
  times_one_fired = 0;
  GraphRewriter rewriter(counted);
  EXPECT_EQ(rewriter.rewrite(first), x + y);
  EXPECT_EQ(rewriter.rewrite(second), x * y);
  EXPECT_EQ(rewriter.rewrite(first), x + y);
  EXPECT_EQ(times_one_fired, 2);  // x*1 once, the outer *1 once
}

int nodes_offered = 0;

// A set whose one rule counts the nodes it is offered and never fires.
RuleSet counting(const char* name) {
  return RuleSet(name) | rule(var("x"), [](Match&) {
           ++nodes_offered;
           return UOpRef{};
         });
}

TEST(GraphRewrite, FixedPointsAreNotOfferedToTheirSetAgain) {
  static const RuleSet remembering = std::move(counting("remembering").remember_fixed_points());
  const RuleSet forgetting = counting("forgetting");
  UOpRef x = var32("x"), y = var32("y");
  UOpRef g = x * i32(2) + y * i32(3);  // 7 nodes
  nodes_offered = 0;
  EXPECT_EQ(graph_rewrite(g, remembering), g);
  EXPECT_EQ(nodes_offered, 7);
  EXPECT_EQ(graph_rewrite(g, remembering), g);
  EXPECT_EQ(nodes_offered, 7);
  EXPECT_EQ(graph_rewrite(g * i32(5), remembering), g * i32(5));  // the 5 and the product only
  EXPECT_EQ(nodes_offered, 9);
  // Another set, a rewrite with a context, and a top-down walk neither read nor leave marks.
  EXPECT_EQ(graph_rewrite(g, forgetting), g);
  EXPECT_EQ(nodes_offered, 16);
  int context = 0;
  EXPECT_EQ(graph_rewrite(g - i32(1), remembering, {RewriteMode::bottom_up, &context}), g - i32(1));
  EXPECT_EQ(nodes_offered, 25);
  EXPECT_EQ(graph_rewrite(g, remembering, {RewriteMode::top_down}), g);
  EXPECT_EQ(nodes_offered, 32);
  // A node marked by one set is still rewritten by another that remembers its own.
  static const RuleSet identities_remembering =
      std::move(RuleSet(identities()).remember_fixed_points());
  EXPECT_EQ(graph_rewrite(x + i32(0), remembering), x + i32(0));
  EXPECT_EQ(graph_rewrite((x + i32(0)) * i32(1), identities_remembering), x);
  EXPECT_EQ(graph_rewrite(x + i32(0), identities_remembering), x);
  EXPECT_EQ(graph_rewrite(x * y, identities_remembering), x * y);
  EXPECT_EQ(graph_rewrite((x * y) + i32(0), identities_remembering), x * y);
}

TEST(GraphRewrite, SingleWalkDoesNotRewriteResults) {
  UOpRef x = var32("x");
  RuleSet wrap = RuleSet("wrap") | rule(pat(Op::DEFINE_VAR), [](Match& m) { return m.root() + 0; });
  EXPECT_EQ(graph_rewrite(x, wrap, {.mode = RewriteMode::single}), x + i32(0));
  EXPECT_EQ(graph_rewrite(x + i32(0), identities(), {.mode = RewriteMode::single}), x);
}

TEST(GraphRewrite, TopDownSeesParentsFirst) {
  UOpRef x = var32("x"), y = var32("y");
  // Top-down, NEG(NEG(a)) is taken whole before its inner NEG is looked at.
  RuleSet set = RuleSet("neg") | rule(-(-var("a")), [](Match& m) { return m["a"]; }) |
                rule(-var("a"), [](Match& m) { return m["a"] * -1; });
  EXPECT_EQ(graph_rewrite(-(-(x + y)), set, {.mode = RewriteMode::top_down}), x + y);
  EXPECT_EQ(graph_rewrite(-(-(x + y)), set), (x + y) * -1 * -1);
}

TEST(GraphRewrite, LoopsAreReportedWithTheRule) {
  UOpRef x = var32("x"), y = var32("y");
  RuleSet swap =
      RuleSet("swap") | rule(var("a") + var("b"), [](Match& m) {
        return UOp::make(Op::ADD, m.root()->dtype(), {m.root()->src(1), m.root()->src(0)});
      });
  try {
    graph_rewrite(x + y, swap);
    FAIL();
  } catch (const IrError& e) {
    EXPECT_NE(std::string(e.what()).find("rewrite_test.cpp:"), std::string::npos) << e.what();
  }
  RuleSet grow = RuleSet("grow") | rule(var("a") + cvar("c"),
                                        [](Match& m) { return m["a"] + (m["c"]->arg_int() + 1); });
  try {
    graph_rewrite(x + i32(0), grow, {.max_chain = 50});
    FAIL();
  } catch (const IrError& e) {
    EXPECT_NE(std::string(e.what()).find("keeps firing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rewrite_test.cpp:"), std::string::npos) << e.what();
  }
}

TEST(GraphRewrite, DeepGraphsDoNotRecurse) {
  UOpRef x = var32("x");
  UOpRef e = x;
  for (int i = 0; i < 100000; ++i) e = (e + i32(0)) * i32(1);
  EXPECT_EQ(graph_rewrite(e, identities()), x);
}

}  // namespace
}  // namespace polygrad
