#include "symbolic/fold.hpp"

#include <cmath>

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

UOpRef fold_float(Op op, DType t, double a, double b, double c) {
  double r;
  switch (op) {
    case Op::NEG:
      r = -a;
      break;
    case Op::RECIP:
      r = 1.0 / a;
      break;
    case Op::SQRT:
      r = std::sqrt(a);
      break;
    case Op::EXP2:
      r = std::exp2(a);
      break;
    case Op::LOG2:
      r = std::log2(a);
      break;
    case Op::SIN:
      r = std::sin(a);
      break;
    case Op::TRUNC:
      r = std::trunc(a);
      break;
    case Op::ADD:
      r = a + b;
      break;
    case Op::SUB:
      r = a - b;
      break;
    case Op::MUL:
      r = a * b;
      break;
    case Op::FDIV:
      r = a / b;
      break;
    case Op::MAX:
      r = std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      break;
    case Op::MULACC:
      r = a * b + c;
      break;
    case Op::CMPLT:
      return const_bool(a < b);
    case Op::CMPNE:
      return const_bool(a != b);
    case Op::CMPEQ:
      return const_bool(a == b);
    default:
      return {};
  }
  return const_float(t, r);
}

// Ints (and bool) computed exactly in 128 bits on the operands' values, then wrapped to t.
// Unsigned operands are read as unsigned so uint64's bit patterns compare and divide right.
UOpRef fold_int(Op op, DType t, DType in, int64_t x, int64_t y, int64_t z) {
  auto val = [&](int64_t v) -> i128 {
    return in.is_unsigned() ? i128{static_cast<uint64_t>(v)} : i128{v};
  };
  i128 a = val(x), b = val(y), r;
  int bits = in.bits();
  switch (op) {
    case Op::NEG:
      r = -a;
      break;
    case Op::NOT:
      r = in.is_bool() ? !a : ~a;
      break;
    case Op::ADD:
      r = a + b;
      break;
    case Op::SUB:
      r = a - b;
      break;
    case Op::MUL:
      r = mul(a, b);
      break;
    case Op::IDIV:
      if (b == 0) return {};
      r = a / b;
      break;
    case Op::MOD:
      if (b == 0) return {};
      r = a % b;
      break;
    case Op::MAX:
      r = a > b ? a : b;
      break;
    case Op::AND:
      r = a & b;
      break;
    case Op::OR:
      r = a | b;
      break;
    case Op::XOR:
      r = a ^ b;
      break;
    case Op::SHL:
      if (b < 0 || b >= bits) return {};
      r = static_cast<i128>(static_cast<u128>(a) << static_cast<int>(b));
      break;
    case Op::SHR:
      if (b < 0 || b >= bits) return {};
      r = a >> static_cast<int>(b);
      break;
    case Op::MULACC:
      r = mul(a, b) + val(z);
      break;
    case Op::CMPLT:
      return const_bool(a < b);
    case Op::CMPNE:
      return const_bool(a != b);
    case Op::CMPEQ:
      return const_bool(a == b);
    default:
      return {};
  }
  if (t.is_bool()) return const_bool(r != 0);
  return const_int(t, static_cast<int64_t>(static_cast<uint64_t>(r)));
}

}  // namespace

UOpRef fold_alu(Op op, DType t, std::span<const UOpRef> srcs) {
  if (srcs.empty() || t.is_vector() || t.is_ptr()) return {};
  for (const UOpRef& s : srcs)
    if (s->op() != Op::CONST || s->dtype().is_vector()) return {};
  if (op == Op::WHERE) {
    bool c = std::get_if<int64_t>(&srcs[0]->arg()) ? srcs[0]->arg_int() != 0 : false;
    return c ? srcs[1] : srcs[2];
  }
  DType in = srcs[0]->dtype();
  if (in.is_float()) {
    auto f = [&](size_t i) { return i < srcs.size() ? as_float(*srcs[i]) : 0.0; };
    return fold_float(op, t, f(0), f(1), f(2));
  }
  auto v = [&](size_t i) { return i < srcs.size() ? srcs[i]->arg_int() : 0; };
  return fold_int(op, t, in, v(0), v(1), v(2));
}

}  // namespace polygrad
