// ALU ops and conversions, one handler per (op, dtype): a loop over the batch's active threads
// that the compiler can vectorise when all are active. Semantics are C's (the conformance
// kit's): integer division truncates, float MAX is NaN when either operand is, shifts use the
// low 6 bits of the count, float -> int conversion truncates.
#include <polygrad/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "batch.hpp"
#include "handlers.hpp"

namespace polygrad::gpu_emu {

namespace {

/// Whether ALU op OP is defined on dtype DT (sdk::op_defined_on, at compile time).
template <uint32_t OP, pg_dtype DT>
constexpr bool defined() {
  using T = Type<DT>;
  const bool is_int = !T::is_float && !T::is_bool;
  switch (OP) {
    case PG_OP_RECIP:
    case PG_OP_SQRT:
    case PG_OP_EXP2:
    case PG_OP_LOG2:
    case PG_OP_SIN:
    case PG_OP_TRUNC:
    case PG_OP_FDIV:
      return T::is_float;
    case PG_OP_IDIV:
    case PG_OP_MOD:
    case PG_OP_SHL:
    case PG_OP_SHR:
      return is_int;
    case PG_OP_NOT:
    case PG_OP_AND:
    case PG_OP_OR:
    case PG_OP_XOR:
      return !T::is_float;
    case PG_OP_NEG:
    case PG_OP_ADD:
    case PG_OP_SUB:
    case PG_OP_MUL:
    case PG_OP_MAX:
    case PG_OP_MULACC:
      return !T::is_bool;
    case PG_OP_CMPLT:  // on bool too: false < true
    case PG_OP_CMPNE:
    case PG_OP_CMPEQ:
      return true;
    default:
      return false;
  }
}

Slot bool_slot(bool v) {
  Slot s;
  s.i = v;
  return s;
}

template <uint32_t OP, pg_dtype DT>
inline Slot float_op(double a, double b, double c) {
  if constexpr (OP == PG_OP_CMPLT) return bool_slot(a < b);
  if constexpr (OP == PG_OP_CMPNE) return bool_slot(a != b);
  if constexpr (OP == PG_OP_CMPEQ) return bool_slot(a == b);
  double v = 0;
  if constexpr (OP == PG_OP_NEG) v = -a;
  if constexpr (OP == PG_OP_RECIP) v = 1.0 / a;
  if constexpr (OP == PG_OP_SQRT) v = std::sqrt(a);
  if constexpr (OP == PG_OP_EXP2) v = std::exp2(a);
  if constexpr (OP == PG_OP_LOG2) v = std::log2(a);
  if constexpr (OP == PG_OP_SIN) v = std::sin(a);
  if constexpr (OP == PG_OP_TRUNC) v = std::trunc(a);
  if constexpr (OP == PG_OP_ADD) v = a + b;
  if constexpr (OP == PG_OP_SUB) v = a - b;
  if constexpr (OP == PG_OP_MUL) v = a * b;
  if constexpr (OP == PG_OP_FDIV) v = a / b;
  if constexpr (OP == PG_OP_MULACC) v = a * b + c;
  if constexpr (OP == PG_OP_MAX) v = (a > b || a != a) ? a : b;  // NaN when either is
  Slot s;
  s.f = Type<DT>::round(v);
  return s;
}

template <uint32_t OP, pg_dtype DT>
inline Slot int_op(int64_t a, int64_t b, int64_t c) {
  using T = Type<DT>;
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if constexpr (OP == PG_OP_CMPLT) return bool_slot(T::is_unsigned ? ua < ub : a < b);
  if constexpr (OP == PG_OP_CMPNE) return bool_slot(a != b);
  if constexpr (OP == PG_OP_CMPEQ) return bool_slot(a == b);
  uint64_t v = 0;
  if constexpr (OP == PG_OP_NEG) v = 0 - ua;
  if constexpr (OP == PG_OP_NOT) v = T::is_bool ? uint64_t{a == 0} : ~ua;
  if constexpr (OP == PG_OP_ADD) v = ua + ub;
  if constexpr (OP == PG_OP_SUB) v = ua - ub;
  if constexpr (OP == PG_OP_MUL) v = ua * ub;
  if constexpr (OP == PG_OP_MULACC) v = ua * ub + static_cast<uint64_t>(c);
  if constexpr (OP == PG_OP_IDIV) {
    if constexpr (T::is_unsigned)
      v = ua / ub;
    else
      v = b == -1 ? 0 - ua : static_cast<uint64_t>(a / b);
  }
  if constexpr (OP == PG_OP_MOD) {
    if constexpr (T::is_unsigned)
      v = ua % ub;
    else
      v = b == -1 ? 0 : static_cast<uint64_t>(a % b);
  }
  if constexpr (OP == PG_OP_MAX)
    v = T::is_unsigned ? std::max(ua, ub) : static_cast<uint64_t>(std::max(a, b));
  if constexpr (OP == PG_OP_AND) v = ua & ub;
  if constexpr (OP == PG_OP_OR) v = ua | ub;
  if constexpr (OP == PG_OP_XOR) v = ua ^ ub;
  if constexpr (OP == PG_OP_SHL) v = ua << (ub & 63);
  if constexpr (OP == PG_OP_SHR)
    v = T::is_unsigned ? ua >> (ub & 63) : static_cast<uint64_t>(a >> (ub & 63));
  Slot s;
  s.i = T::wrap(v);
  return s;
}

template <uint32_t OP, pg_dtype DT>
inline Slot apply(Slot a, Slot b, Slot c) {
  if constexpr (Type<DT>::is_float)
    return float_op<OP, DT>(a.f, b.f, c.f);
  else
    return int_op<OP, DT>(a.i, b.i, c.i);
}

constexpr uint32_t source_count(uint32_t op) {
  return op == PG_OP_MULACC ? 3
         : op == PG_OP_NEG || op == PG_OP_NOT || op == PG_OP_RECIP || op == PG_OP_SQRT ||
                 op == PG_OP_EXP2 || op == PG_OP_LOG2 || op == PG_OP_SIN || op == PG_OP_TRUNC
             ? 1
             : 2;
}

template <uint32_t OP, pg_dtype DT>
void run_alu(const Instr& in, Batch& b) {
  constexpr uint32_t n = source_count(OP);
  const Active& active = b.active(in);
  for (uint32_t l = 0; l < in.lanes; ++l) {
    Slot* __restrict d = b.row(in.dst + l);
    const Slot* x = b.row(in.src[0] + l * in.step[0]);
    const Slot* y = n > 1 ? b.row(in.src[1] + l * in.step[1]) : x;
    const Slot* z = n > 2 ? b.row(in.src[2] + l * in.step[2]) : x;
    if constexpr (OP == PG_OP_IDIV || OP == PG_OP_MOD)
      for_each_thread(active, [&](uint32_t t) {
        if (y[t].i == 0) b.fault(in, "integer division by zero in " + b.thread_name(t));
      });
    for_each_thread(active, [&](uint32_t t) { d[t] = apply<OP, DT>(x[t], y[t], z[t]); });
  }
}

template <pg_dtype DT>
Handler alu_for(uint32_t op) {
  switch (op) {
#define PG_EMU_ALU(name)                       \
  case PG_OP_##name:                           \
    if constexpr (defined<PG_OP_##name, DT>()) \
      return &run_alu<PG_OP_##name, DT>;       \
    else                                       \
      return nullptr;
    PG_EMU_ALU(NEG)
    PG_EMU_ALU(NOT)
    PG_EMU_ALU(RECIP)
    PG_EMU_ALU(SQRT)
    PG_EMU_ALU(EXP2)
    PG_EMU_ALU(LOG2)
    PG_EMU_ALU(SIN)
    PG_EMU_ALU(TRUNC)
    PG_EMU_ALU(ADD)
    PG_EMU_ALU(SUB)
    PG_EMU_ALU(MUL)
    PG_EMU_ALU(FDIV)
    PG_EMU_ALU(IDIV)
    PG_EMU_ALU(MOD)
    PG_EMU_ALU(MAX)
    PG_EMU_ALU(CMPLT)
    PG_EMU_ALU(CMPNE)
    PG_EMU_ALU(CMPEQ)
    PG_EMU_ALU(AND)
    PG_EMU_ALU(OR)
    PG_EMU_ALU(XOR)
    PG_EMU_ALU(SHL)
    PG_EMU_ALU(SHR)
    PG_EMU_ALU(MULACC)
#undef PG_EMU_ALU
    default:
      return nullptr;
  }
}

/// C's conversion of a FROM value to TO (float -> int truncates; out of range gives 0).
template <pg_dtype FROM, pg_dtype TO>
inline Slot convert(Slot v) {
  using F = Type<FROM>;
  using T = Type<TO>;
  Slot r;
  if constexpr (T::is_float) {
    if constexpr (F::is_float) {
      r.f = T::round(v.f);
    } else if constexpr (TO == PG_DTYPE_FLOAT32) {  // one rounding, not two through double
      r.f =
          F::is_unsigned ? static_cast<float>(static_cast<uint64_t>(v.i)) : static_cast<float>(v.i);
    } else {
      r.f = T::round(F::is_unsigned ? static_cast<double>(static_cast<uint64_t>(v.i))
                                    : static_cast<double>(v.i));
    }
  } else if constexpr (!F::is_float) {
    r.i = T::wrap(static_cast<uint64_t>(v.i));
  } else if constexpr (T::is_bool) {
    r.i = v.f != 0;
  } else {
    const double t = std::trunc(v.f);
    if (!(std::fabs(t) < 1.8e19))
      r.i = 0;
    else
      r.i = T::wrap(t < 0 ? static_cast<uint64_t>(static_cast<int64_t>(t))
                          : static_cast<uint64_t>(t));
  }
  return r;
}

template <pg_dtype FROM, pg_dtype TO>
void run_cast(const Instr& in, Batch& b) {
  const Active& active = b.active(in);
  for (uint32_t l = 0; l < in.lanes; ++l) {
    Slot* __restrict d = b.row(in.dst + l);
    const Slot* x = b.row(in.src[0] + l * in.step[0]);
    for_each_thread(active, [&](uint32_t t) { d[t] = convert<FROM, TO>(x[t]); });
  }
}

template <pg_dtype FROM, pg_dtype TO>
void run_bitcast(const Instr& in, Batch& b) {
  const Active& active = b.active(in);
  for (uint32_t l = 0; l < in.lanes; ++l) {
    Slot* __restrict d = b.row(in.dst + l);
    const Slot* x = b.row(in.src[0] + l * in.step[0]);
    for_each_thread(active, [&](uint32_t t) {
      unsigned char bytes[8] = {};
      Type<FROM>::write(x[t], bytes);
      d[t] = Type<TO>::read(bytes);
    });
  }
}

}  // namespace

Handler alu_handler(uint32_t op, pg_dtype operand) {
  return with_dtype(operand, [&]<pg_dtype DT>() { return alu_for<DT>(op); });
}

Handler cast_handler(pg_dtype from, pg_dtype to) {
  return with_dtype(from, [&]<pg_dtype F>() {
    return with_dtype(to, [&]<pg_dtype T>() -> Handler { return &run_cast<F, T>; });
  });
}

Handler bitcast_handler(pg_dtype from, pg_dtype to) {
  return with_dtype(from, [&]<pg_dtype F>() {
    return with_dtype(to, [&]<pg_dtype T>() -> Handler {
      if constexpr (Type<F>::size == Type<T>::size)
        return &run_bitcast<F, T>;
      else
        return nullptr;
    });
  });
}

}  // namespace polygrad::gpu_emu
