#include "symbolic/fold.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace polygrad {

namespace {

using i128 = __int128;
using u128 = unsigned __int128;

// Product modulo 2^128: only the low bits survive the wrap to t.
i128 mul(i128 a, i128 b) {
  return static_cast<i128>(static_cast<u128>(a) * static_cast<u128>(b));
}

double as_float(const UOp& c) {
  if (const double* d = std::get_if<double>(&c.arg())) return *d;
  return static_cast<double>(c.arg_int());
}

// The comparisons, the same for floats and (exact, 128-bit) ints; nullopt for other ops.
template <typename T>
std::optional<bool> fold_compare(Op op, T a, T b) {
  switch (op) {
    case Op::CMPLT:
      return a < b;
    case Op::CMPNE:
      return a != b;
    case Op::CMPEQ:
      return a == b;
    default:
      return std::nullopt;
  }
}

// Float ops in double; the caller rounds the result to the dtype.
std::optional<double> fold_float(Op op, double a, double b, double c) {
  switch (op) {
    case Op::NEG:
      return -a;
    case Op::RECIP:
      return 1.0 / a;
    case Op::SQRT:
      return std::sqrt(a);
    case Op::EXP2:
      return std::exp2(a);
    case Op::LOG2:
      return std::log2(a);
    case Op::SIN:
      return std::sin(a);
    case Op::TRUNC:
      return std::trunc(a);
    case Op::ADD:
      return a + b;
    case Op::SUB:
      return a - b;
    case Op::MUL:
      return a * b;
    case Op::FDIV:
      return a / b;
    case Op::MAX:
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case Op::MULACC:
      return a * b + c;
    default:
      return std::nullopt;
  }
}

// Ints (and bool) computed exactly in 128 bits on the operands' values; the caller wraps the
// result to the dtype. nullopt where the result is undefined.
std::optional<i128> fold_int(Op op, DType in, i128 a, i128 b, i128 c) {
  switch (op) {
    case Op::NEG:
      return -a;
    case Op::NOT:
      return in.is_bool() ? !a : ~a;
    case Op::ADD:
      return a + b;
    case Op::SUB:
      return a - b;
    case Op::MUL:
      return mul(a, b);
    case Op::IDIV:
      return b == 0 ? std::nullopt : std::optional<i128>(a / b);
    case Op::MOD:
      return b == 0 ? std::nullopt : std::optional<i128>(a % b);
    case Op::MAX:
      return a > b ? a : b;
    case Op::AND:
      return a & b;
    case Op::OR:
      return a | b;
    case Op::XOR:
      return a ^ b;
    case Op::SHL:
      if (b < 0 || b >= in.bits()) return std::nullopt;
      return static_cast<i128>(static_cast<u128>(a) << static_cast<int>(b));
    case Op::SHR:
      if (b < 0 || b >= in.bits()) return std::nullopt;
      return a >> static_cast<int>(b);
    case Op::MULACC:
      return mul(a, b) + c;
    default:
      return std::nullopt;
  }
}

}  // namespace

// WHERE is not folded here: rules_fold.cpp's where(c, a, b) rule picks a source for any
// constant condition.
UOpRef fold_alu(Op op, DType t, std::span<const UOpRef> srcs) {
  if (srcs.empty() || t.is_vector() || t.is_ptr()) return {};
  for (const UOpRef& s : srcs)
    if (s->op() != Op::CONST || s->dtype().is_vector()) return {};
  DType in = srcs[0]->dtype();
  if (in.is_float()) {
    auto f = [&](size_t i) { return i < srcs.size() ? as_float(*srcs[i]) : 0.0; };
    if (auto r = fold_compare(op, f(0), f(1))) return const_bool(*r);
    auto r = fold_float(op, f(0), f(1), f(2));
    return r ? const_float(t, *r) : UOpRef();
  }
  // Unsigned operands are read as unsigned so uint64's bit patterns compare and divide right.
  auto v = [&](size_t i) -> i128 {
    int64_t x = i < srcs.size() ? srcs[i]->arg_int() : 0;
    return in.is_unsigned() ? i128{static_cast<uint64_t>(x)} : i128{x};
  };
  if (auto r = fold_compare(op, v(0), v(1))) return const_bool(*r);
  auto r = fold_int(op, in, v(0), v(1), v(2));
  if (!r) return {};
  if (t.is_bool()) return const_bool(*r != 0);
  return const_int(t, static_cast<int64_t>(static_cast<uint64_t>(*r)));
}

}  // namespace polygrad
