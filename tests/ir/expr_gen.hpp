// Random int32 expressions over three bounded variables, built from a byte stream, and an
// evaluator that computes their value independently of polygrad's folding code. Shared by the
// randomized test and the fuzz target.
#ifndef POLYGRAD_TESTS_IR_EXPR_GEN_HPP
#define POLYGRAD_TESTS_IR_EXPR_GEN_HPP

#include "ir/uop.hpp"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace polygrad::testing {

struct VarSpec {
  const char* name;
  int64_t lo, hi;
};
inline constexpr VarSpec kVars[] = {{"a", 0, 9}, {"b", -5, 5}, {"c", 0, 100}};

/// Reads choices from bytes; past the end every choice is 0.
class ByteSource {
 public:
  ByteSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t next() { return pos_ < size_ ? data_[pos_++] : 0; }

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
};

inline UOpRef var_node(int i) {
  return define_var(kVars[i].name, kVars[i].lo, kVars[i].hi, dtypes::int32);
}

inline UOpRef gen_expr(ByteSource& in, int depth) {
  uint8_t op = in.next();
  auto leaf = [&] {
    uint8_t k = in.next();
    if (k % 2) return var_node(k / 2 % 3);
    return const_int(dtypes::int32, static_cast<int64_t>(in.next() % 41) - 20);
  };
  if (depth == 0) return leaf();
  auto sub = [&] { return gen_expr(in, depth - 1); };
  auto divisor = [&] {
    int64_t d = static_cast<int64_t>(in.next() % 17) - 8;
    return const_int(dtypes::int32, d == 0 ? 3 : d);
  };
  int kind = op % 11;
  if (kind == 0) return leaf();
  // Operands are drawn into locals, in order: the order in which a call's arguments are
  // evaluated is unspecified, and a byte string must give the same expression under every
  // compiler (a crash found by the clang libFuzzer build replays in a GCC build).
  UOpRef x = sub();
  switch (kind) {
    case 7:
      return -x;
    case 4:
      return x / divisor();
    case 5:
      return x % divisor();
    case 9:
      return x * const_int(dtypes::int32, in.next() % 9);
    case 10:
      return x + const_int(dtypes::int32, static_cast<int64_t>(in.next() % 21) - 10);
    default:
      break;
  }
  UOpRef y = sub();
  switch (kind) {
    case 1:
      return x + y;
    case 2:
      return x - y;
    case 3:
      return x * y;
    case 6:
      return max(x, y);
    default: {  // 8
      UOpRef a = sub();
      UOpRef b = sub();
      return where(lt(x, y), a, b);
    }
  }
}

/// The value of `u` with variables set to `env` (by name), as C int32 arithmetic with wrap.
inline int64_t eval_expr(const UOp& u, const std::map<std::string, int64_t>& env) {
  auto wrap = [](int64_t v) {
    return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v)));
  };
  auto s = [&](size_t i) { return eval_expr(*u.src(i), env); };
  switch (u.op()) {
    case Op::CONST:
      return u.arg_int();
    case Op::DEFINE_VAR:
      return env.at(u.arg_var().name);
    case Op::ADD:
      return wrap(s(0) + s(1));
    case Op::SUB:
      return wrap(s(0) - s(1));
    case Op::MUL:
      return wrap(s(0) * s(1));
    case Op::NEG:
      return wrap(-s(0));
    case Op::MAX:
      return std::max(s(0), s(1));
    case Op::IDIV: {
      int64_t b = s(1);
      if (b == 0) throw std::runtime_error("division by zero");
      return wrap(s(0) / b);
    }
    case Op::MOD: {
      int64_t b = s(1);
      if (b == 0) throw std::runtime_error("modulo by zero");
      return wrap(s(0) % b);
    }
    case Op::CMPLT:
      return s(0) < s(1);
    case Op::CMPNE:
      return s(0) != s(1);
    case Op::CMPEQ:
      return s(0) == s(1);
    case Op::WHERE:
      return s(0) ? s(1) : s(2);
    default:
      throw std::runtime_error("eval: unexpected op " + std::string(op_name(u.op())));
  }
}

}  // namespace polygrad::testing

#endif  // POLYGRAD_TESTS_IR_EXPR_GEN_HPP
