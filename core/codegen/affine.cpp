// See affine.hpp.
#include "codegen/affine.hpp"

#include <unordered_map>

#include "ir/graph.hpp"

namespace polygrad::codegen {

namespace {

class Splitter {
 public:
  explicit Splitter(const UOp* r) : r_(r), reaches_(r) {}

  /// {a, b} of `n` (which reaches r), or nullopt.
  std::optional<std::pair<UOpRef, UOpRef>> split(const UOpRef& n) {
    if (n.get() == r_) return std::pair<UOpRef, UOpRef>{};
    const DType t = n->dtype();
    auto constant = [&](double v) { return const_float(t, v); };
    switch (n->op()) {
      case Op::NEG: {
        auto x = split(n->src(0));
        if (!x) return std::nullopt;
        return std::pair{x->first ? -x->first : UOpRef(), x->second ? -x->second : constant(-1)};
      }
      case Op::ADD:
      case Op::SUB:
      case Op::MUL: {
        const bool left = reaches_(n->src(0).get()), right = reaches_(n->src(1).get());
        if (left == right) return std::nullopt;
        const UOpRef& other = left ? n->src(1) : n->src(0);
        auto x = split(left ? n->src(0) : n->src(1));
        if (!x) return std::nullopt;
        auto [a, b] = *x;
        if (n->op() == Op::MUL)  // (a + b r) * o
          return std::pair{a ? a * other : UOpRef(), b ? b * other : other};
        if (n->op() == Op::ADD)  // (a + b r) + o
          return std::pair{a ? a + other : other, b};
        if (left)  // (a + b r) - o
          return std::pair{a ? a - other : -other, b};
        return std::pair{a ? other - a : other, b ? -b : constant(-1)};  // o - (a + b r)
      }
      case Op::WHERE: {
        const bool yes = reaches_(n->src(1).get()), no = reaches_(n->src(2).get());
        if (reaches_(n->src(0).get()) || yes == no) return std::nullopt;
        auto x = split(yes ? n->src(1) : n->src(2));
        if (!x) return std::nullopt;
        auto [a, b] = *x;
        const UOpRef& c = n->src(0);
        const UOpRef& other = yes ? n->src(2) : n->src(1);
        // c ? a + b r : o  ==  (c ? a : o) + (c ? b : 0) r  (and mirrored)
        UOpRef a_in = a ? a : constant(0), b_in = b ? b : constant(1);
        return yes ? std::pair{where(c, a_in, other), where(c, b_in, constant(0))}
                   : std::pair{where(c, other, a_in), where(c, constant(0), b_in)};
      }
      default:
        return std::nullopt;
    }
  }

 private:
  const UOp* r_;
  ReachesNode reaches_;
};

}  // namespace

std::optional<AffineInReduce> affine_in_reduce(const UOpRef& value) {
  const UOp* reduce = nullptr;
  for (const UOp* n : toposort(value))
    if (n->op() == Op::REDUCE) {
      if (reduce != nullptr) return std::nullopt;
      reduce = n;
    }
  if (reduce == nullptr) return std::nullopt;
  auto parts = Splitter(reduce).split(value);
  if (!parts) return std::nullopt;
  return AffineInReduce{reduce, parts->first, parts->second};
}

std::optional<int64_t> coefficient(const UOp* n, const UOp* j) {
  if (n == j) return 1;
  if (n->op() == Op::CONST || n->op() == Op::DEFINE_VAR) return 0;
  if (n->op() == Op::RANGE) return 0;  // another loop variable (its end does not use j here)
  auto c = [&](size_t i) { return coefficient(n->src(i).get(), j); };
  switch (n->op()) {
    case Op::ADD:
    case Op::SUB: {
      auto a = c(0), b = c(1);
      if (!a || !b) return std::nullopt;
      return n->op() == Op::ADD ? *a + *b : *a - *b;
    }
    case Op::NEG: {
      auto a = c(0);
      return a ? std::optional<int64_t>(-*a) : std::nullopt;
    }
    case Op::MUL: {
      auto a = c(0), b = c(1);
      if (!a || !b) return std::nullopt;
      if (*a == 0 && *b == 0) return 0;
      const UOpRef& k = *a == 0 ? n->src(0) : n->src(1);
      if ((*a != 0 && *b != 0) || k->op() != Op::CONST) return std::nullopt;
      return (*a + *b) * k->arg_int();
    }
    default: {
      for (size_t i = 0; i < n->nsrcs(); ++i) {
        auto a = c(i);
        if (!a || *a != 0) return std::nullopt;
      }
      return 0;
    }
  }
}

}  // namespace polygrad::codegen
