// GCC 12 reports a false -Wrestrict inside std::string concatenation (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include "rewrite/pattern.hpp"

#include <cstdio>

namespace polygrad {

namespace {

std::shared_ptr<PatternNode> copy(const Pattern& p) {
  return std::make_shared<PatternNode>(p.node());
}

Pattern with_srcs(Pattern p, SrcMode mode, std::initializer_list<Pattern> srcs) {
  auto n = copy(p);
  n->mode = mode;
  n->srcs.clear();
  for (const Pattern& s : srcs) n->srcs.push_back(s.ptr());
  return Pattern(n);
}

Pattern binary(Op op, const Pattern& a, const Pattern& b) {
  return is_commutative(op) ? pat_commutative(op, a, b) : pat(op, {a, b});
}

}  // namespace

Pattern Pattern::named(std::string name) const {
  auto n = copy(*this);
  n->name = std::move(name);
  return Pattern(n);
}

Pattern Pattern::dtype(std::initializer_list<DType> ts) const {
  auto n = copy(*this);
  n->dtypes.assign(ts.begin(), ts.end());
  return Pattern(n);
}

Pattern Pattern::dtype(DTypePredicate p) const {
  auto n = copy(*this);
  n->dtype_pred = p;
  return Pattern(n);
}

Pattern Pattern::where(NodePredicate p) const {
  auto n = copy(*this);
  n->pred = p;
  return Pattern(n);
}

Pattern Pattern::arg(Arg a) const {
  auto n = copy(*this);
  n->arg = std::move(a);
  return Pattern(n);
}

Pattern Pattern::srcs(std::initializer_list<Pattern> ps) const {
  return with_srcs(*this, SrcMode::exact, ps);
}

Pattern Pattern::repeat(const Pattern& p) const {
  return with_srcs(*this, SrcMode::repeat, {p});
}

std::string Pattern::to_string() const {
  const PatternNode& n = *n_;
  std::string s;
  if (n.ops.none()) {
    s = n.name.empty() ? "_" : n.name;
  } else {
    for (int i = 0; i < kOpCount; ++i) {
      if (!n.ops[i]) continue;
      if (!s.empty()) s += "|";
      s += op_name(static_cast<Op>(i));
    }
    if (n.ops.count() > 3) {
      s = "{";
      s += std::to_string(n.ops.count());
      s += " ops}";
    }
    if (!n.name.empty()) s.insert(0, n.name + ":");
  }
  if (n.const_value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "=%g", *n.const_value);
    s += buf;
  }
  if (n.mode == SrcMode::any) return s;
  s += "(";
  for (size_t i = 0; i < n.srcs.size(); ++i) {
    if (i) s += ", ";
    s += Pattern(n.srcs[i]).to_string();
  }
  return s + (n.mode == SrcMode::repeat ? "...)" : ")");
}

Pattern var(std::string name) {
  auto n = std::make_shared<PatternNode>();
  n->name = std::move(name);
  return Pattern(n);
}

Pattern cvar(std::string name) {
  return pat(Op::CONST).named(std::move(name));
}
Pattern cvar(std::string name, DType t) {
  return cvar(std::move(name)).dtype(t);
}

Pattern cconst(double v) {
  auto n = std::make_shared<PatternNode>();
  n->ops.set(static_cast<size_t>(Op::CONST));
  n->const_value = v;
  return Pattern(n);
}

Pattern pat(Op op) {
  return pat({op});
}

Pattern pat(std::initializer_list<Op> ops) {
  auto n = std::make_shared<PatternNode>();
  for (Op op : ops) n->ops.set(static_cast<size_t>(op));
  return Pattern(n);
}

Pattern pat(Op op, std::initializer_list<Pattern> srcs) {
  return with_srcs(pat(op), SrcMode::exact, srcs);
}

Pattern pat_commutative(Op op, const Pattern& a, const Pattern& b) {
  return with_srcs(pat(op), SrcMode::commutative, {a, b});
}

Pattern pat_group(uint32_t groups) {
  auto n = std::make_shared<PatternNode>();
  for (int i = 0; i < kOpCount; ++i)
    if (op_in(static_cast<Op>(i), groups)) n->ops.set(i);
  return Pattern(n);
}

Pattern operator+(const Pattern& a, const Pattern& b) {
  return binary(Op::ADD, a, b);
}
Pattern operator-(const Pattern& a, const Pattern& b) {
  return binary(Op::SUB, a, b);
}
Pattern operator*(const Pattern& a, const Pattern& b) {
  return binary(Op::MUL, a, b);
}
Pattern operator%(const Pattern& a, const Pattern& b) {
  return binary(Op::MOD, a, b);
}
Pattern operator-(const Pattern& a) {
  return pat(Op::NEG, {a});
}
Pattern operator&(const Pattern& a, const Pattern& b) {
  return binary(Op::AND, a, b);
}
Pattern operator|(const Pattern& a, const Pattern& b) {
  return binary(Op::OR, a, b);
}
Pattern operator^(const Pattern& a, const Pattern& b) {
  return binary(Op::XOR, a, b);
}
Pattern idiv(const Pattern& a, const Pattern& b) {
  return binary(Op::IDIV, a, b);
}
Pattern max(const Pattern& a, const Pattern& b) {
  return binary(Op::MAX, a, b);
}
Pattern lt(const Pattern& a, const Pattern& b) {
  return binary(Op::CMPLT, a, b);
}
Pattern ne(const Pattern& a, const Pattern& b) {
  return binary(Op::CMPNE, a, b);
}
Pattern eq(const Pattern& a, const Pattern& b) {
  return binary(Op::CMPEQ, a, b);
}
Pattern where(const Pattern& c, const Pattern& a, const Pattern& b) {
  return pat(Op::WHERE, {c, a, b});
}

}  // namespace polygrad
