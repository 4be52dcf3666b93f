#include "ir/uop.hpp"

#include "ir/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace polygrad {

namespace {

template <typename T>
const T& arg_as(const UOp& u, const char* want) {
  if (const T* v = std::get_if<T>(&u.arg())) return *v;
  ir_error(std::string(op_name(u.op())) + ": arg is not " + want + " (got '" +
           arg_to_string(u.arg()) + "')");
}

// Round a double to what a float16 or bfloat16 can hold (nearest, ties to even).
double round_to_16bit(double v, bool bf16) {
  if (std::isnan(v) || std::isinf(v)) return v;
  float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (bf16) {
    bits += 0x7fff + ((bits >> 16) & 1);
    bits &= 0xffff0000u;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  double a = std::fabs(v);
  if (a >= 65520.0) return std::copysign(INFINITY, v);  // rounds past the largest half
  // Quantum of the half grid at this magnitude: 2^(e-10), subnormals 2^-24.
  int e = a == 0 ? -24 : std::max(std::ilogb(a), -14);
  double q = std::ldexp(1.0, e - 10);
  return std::nearbyint(v / q) * q;
}

}  // namespace

int64_t UOp::arg_int() const {
  return arg_as<int64_t>(*this, "an int");
}
double UOp::arg_float() const {
  return arg_as<double>(*this, "a float");
}
const std::string& UOp::arg_str() const {
  return arg_as<std::string>(*this, "a string");
}
const std::vector<int64_t>& UOp::arg_ints() const {
  return arg_as<std::vector<int64_t>>(*this, "an int list");
}
const Var& UOp::arg_var() const {
  return arg_as<Var>(*this, "a Var");
}

UOpRef UOp::with_srcs(std::span<const UOpRef> srcs) const {
  bool same = srcs.size() == nsrc_;
  for (size_t i = 0; same && i < nsrc_; ++i) same = srcs[i].get() == src(i).get();
  if (same) return ref();
  return make(op_, dtype_, srcs, Arg(arg_));
}

uint8_t UOp::cached_bounds(int64_t& lo, int64_t& hi) const {
  uint8_t s = bounds_state_.load(std::memory_order_acquire);
  if (s == 2) {
    lo = vmin_.load(std::memory_order_relaxed);
    hi = vmax_.load(std::memory_order_relaxed);
  }
  return s;
}

void UOp::cache_bounds(uint8_t state, int64_t lo, int64_t hi) const {
  vmin_.store(lo, std::memory_order_relaxed);
  vmax_.store(hi, std::memory_order_relaxed);
  bounds_state_.store(state, std::memory_order_release);
}

UOp::~UOp() {
  delete shape_.load(std::memory_order_relaxed);
}

const std::vector<int64_t>& UOp::cache_shape(std::vector<int64_t> shape) const {
  auto* fresh = new std::vector<int64_t>(std::move(shape));
  const std::vector<int64_t>* expected = nullptr;
  if (shape_.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *expected;
}

UOpRef const_int(DType t, int64_t v) {
  if (t.scalar_type().is_float()) return const_float(t, static_cast<double>(v));
  return UOp::make(Op::CONST, t, {}, wrap_int(t.scalar_type(), v));
}

UOpRef const_float(DType t, double v) {
  if (!t.scalar_type().is_float()) return const_int(t, static_cast<int64_t>(v));
  switch (t.scalar()) {
    case PG_DTYPE_FLOAT32:
      v = static_cast<float>(v);
      break;
    case PG_DTYPE_FLOAT16:
      v = round_to_16bit(v, false);
      break;
    case PG_DTYPE_BFLOAT16:
      v = round_to_16bit(v, true);
      break;
    default:
      break;
  }
  return UOp::make(Op::CONST, t, {}, v);
}

UOpRef const_bool(bool v) {
  return UOp::make(Op::CONST, dtypes::bool_, {}, int64_t{v});
}

UOpRef const_like(const UOpRef& like, int64_t v) {
  return const_int(like->dtype(), v);
}

bool is_zero_const(const UOp* u) {
  if (u->op() != Op::CONST) return false;
  if (const auto* i = std::get_if<int64_t>(&u->arg())) return *i == 0;
  if (const auto* d = std::get_if<double>(&u->arg())) return *d == 0.0;
  if (const auto* b = std::get_if<bool>(&u->arg())) return !*b;
  return false;
}

UOpRef define_var(const std::string& name, int64_t vmin, int64_t vmax, DType t) {
  return UOp::make(Op::DEFINE_VAR, t, {}, Var{name, vmin, vmax});
}

UOpRef range(const UOpRef& end, int64_t id) {
  return UOp::make(Op::RANGE, end->dtype(), {end}, id);
}

UOpRef alu(Op op, std::initializer_list<UOpRef> srcs) {
  DType t = srcs.begin()->get()->dtype();
  if (op == Op::WHERE) t = srcs.begin()[1]->dtype();
  if (is_compare(op)) t = dtypes::bool_.vec(t.lanes());
  return UOp::make(op, t, srcs);
}

UOpRef cast(const UOpRef& x, DType t) {
  return UOp::make(Op::CAST, t, {x});
}
UOpRef where(const UOpRef& c, const UOpRef& a, const UOpRef& b) {
  return alu(Op::WHERE, {c, a, b});
}

UOpRef operator+(const UOpRef& a, const UOpRef& b) {
  return alu(Op::ADD, {a, b});
}
UOpRef operator-(const UOpRef& a, const UOpRef& b) {
  return alu(Op::SUB, {a, b});
}
UOpRef operator*(const UOpRef& a, const UOpRef& b) {
  return alu(Op::MUL, {a, b});
}
UOpRef operator/(const UOpRef& a, const UOpRef& b) {
  return alu(a->dtype().is_float() ? Op::FDIV : Op::IDIV, {a, b});
}
UOpRef operator%(const UOpRef& a, const UOpRef& b) {
  return alu(Op::MOD, {a, b});
}
UOpRef operator-(const UOpRef& a) {
  return alu(Op::NEG, {a});
}
UOpRef operator+(const UOpRef& a, int64_t b) {
  return a + const_like(a, b);
}
UOpRef operator-(const UOpRef& a, int64_t b) {
  return a - const_like(a, b);
}
UOpRef operator*(const UOpRef& a, int64_t b) {
  return a * const_like(a, b);
}
UOpRef operator/(const UOpRef& a, int64_t b) {
  return a / const_like(a, b);
}
UOpRef operator%(const UOpRef& a, int64_t b) {
  return a % const_like(a, b);
}
UOpRef max(const UOpRef& a, const UOpRef& b) {
  return alu(Op::MAX, {a, b});
}
UOpRef lt(const UOpRef& a, const UOpRef& b) {
  return alu(Op::CMPLT, {a, b});
}
UOpRef ne(const UOpRef& a, const UOpRef& b) {
  return alu(Op::CMPNE, {a, b});
}
UOpRef eq(const UOpRef& a, const UOpRef& b) {
  return alu(Op::CMPEQ, {a, b});
}

}  // namespace polygrad
