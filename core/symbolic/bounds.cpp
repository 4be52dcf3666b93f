#include "symbolic/bounds.hpp"

#include <algorithm>
#include <initializer_list>

namespace polygrad {

namespace {

using i128 = __int128;

bool has_bounds(DType t) {
  return !t.is_ptr() && !t.is_vector() && (t.is_bool() || t.is_int()) &&
         t.scalar() != PG_DTYPE_UINT64;
}

Bounds full(DType t) {
  return {t.int_min(), t.int_max()};
}

// The range of candidate corner values, or the dtype's range when it would not fit.
Bounds span(DType t, std::initializer_list<i128> corners) {
  i128 lo = *std::min_element(corners.begin(), corners.end());
  i128 hi = *std::max_element(corners.begin(), corners.end());
  if (!fits(t, lo, hi)) return full(t);
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

i128 tdiv(i128 a, i128 b) {
  return a / b;
}  // C truncating division

Bounds compute(const UOp& u) {
  DType t = u.dtype();
  auto src = [&](size_t i) { return bounds(*u.src(i)); };
  switch (u.op()) {
    case Op::CONST: {
      int64_t v = u.arg_int();
      return {v, v};
    }
    case Op::DEFINE_VAR:
      return {u.arg_var().vmin, u.arg_var().vmax};
    case Op::RANGE:
    case Op::SPECIAL: {
      auto e = src(0);
      if (!e) return full(t);
      return {0, std::max<int64_t>(0, e->hi - 1)};
    }
    default:
      break;
  }
  if (!is_alu(u.op()) && u.op() != Op::CAST) return full(t);
  std::optional<Bounds> a = u.nsrcs() > 0 ? src(0) : std::nullopt;
  std::optional<Bounds> b = u.nsrcs() > 1 ? src(1) : std::nullopt;
  if (u.op() == Op::WHERE) {
    auto x = src(1), y = src(2);
    if (!x || !y) return full(t);
    if (a && a->lo == a->hi) return a->lo ? *x : *y;
    return {std::min(x->lo, y->lo), std::max(x->hi, y->hi)};
  }
  if (!a || (is_binary(u.op()) && !b)) return full(t);
  switch (u.op()) {
    case Op::CAST:
      return fits(t, a->lo, a->hi) ? *a : full(t);
    case Op::NEG:
      return span(t, {-i128{a->lo}, -i128{a->hi}});
    case Op::NOT:
      if (t.is_bool()) return {1 - a->hi, 1 - a->lo};
      return full(t);
    case Op::ADD:
      return span(t, {i128{a->lo} + b->lo, i128{a->hi} + b->hi});
    case Op::SUB:
      return span(t, {i128{a->lo} - b->hi, i128{a->hi} - b->lo});
    case Op::MUL:
      return span(
          t, {i128{a->lo} * b->lo, i128{a->lo} * b->hi, i128{a->hi} * b->lo, i128{a->hi} * b->hi});
    case Op::MAX:
      return {std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    case Op::IDIV:
      if (b->lo <= 0 && b->hi >= 0) return full(t);
      return span(t,
                  {tdiv(a->lo, b->lo), tdiv(a->lo, b->hi), tdiv(a->hi, b->lo), tdiv(a->hi, b->hi)});
    case Op::MOD: {
      if (b->lo <= 0 && b->hi >= 0) return full(t);
      int64_t m = static_cast<int64_t>(std::max(-i128{b->lo}, i128{b->hi}) - 1);
      if (a->lo >= 0) return {0, std::min(a->hi, m)};
      if (a->hi <= 0) return {std::max(a->lo, -m), 0};
      return {std::max(a->lo, -m), std::min(a->hi, m)};
    }
    case Op::CMPLT:
      if (a->hi < b->lo) return {1, 1};
      if (a->lo >= b->hi) return {0, 0};
      return {0, 1};
    case Op::CMPNE:
    case Op::CMPEQ: {
      bool ne = u.op() == Op::CMPNE;
      if (a->hi < b->lo || b->hi < a->lo) return {ne, ne};
      if (a->lo == a->hi && b->lo == b->hi) return {!ne, !ne};
      return {0, 1};
    }
    case Op::AND:
      if (t.is_bool()) return {a->lo & b->lo, a->hi & b->hi};
      if (a->lo >= 0 && b->lo >= 0) return {0, std::min(a->hi, b->hi)};
      if (a->lo >= 0) return {0, a->hi};
      if (b->lo >= 0) return {0, b->hi};
      return full(t);
    case Op::OR:
      if (t.is_bool()) return {a->lo | b->lo, a->hi | b->hi};
      return full(t);
    case Op::SHL:
      if (b->lo != b->hi || b->lo < 0 || b->lo >= t.bits() - 1) return full(t);
      return span(t, {i128{a->lo} << b->lo, i128{a->hi} << b->lo});
    case Op::SHR:
      if (b->lo != b->hi || b->lo < 0 || b->lo >= t.bits()) return full(t);
      return {a->lo >> b->lo, a->hi >> b->lo};
    default:
      return full(t);
  }
}

}  // namespace

bool fits(DType t, i128 lo, i128 hi) {
  return lo >= t.int_min() && hi <= t.int_max();
}

std::optional<Bounds> bounds(const UOp& u) {
  if (!has_bounds(u.dtype())) return std::nullopt;
  int64_t lo, hi;
  if (u.cached_bounds(lo, hi) == 2) return Bounds{lo, hi};
  Bounds b = compute(u);
  u.cache_bounds(2, b.lo, b.hi);
  return b;
}

}  // namespace polygrad
