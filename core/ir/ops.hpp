// Every UOp op, listed once. Names, group predicates, the printer and the verifier's source
// counts are generated from POLYGRAD_OPS; add an op by adding one line.
//
// X(NAME, groups, min_srcs, max_srcs, doc). max_srcs = -1: any number. Shapes: a movement op
// carries its shape or its per-axis numbers as SOURCES, one index-dtype (int64) scalar UOp per
// number: a CONST for a static dim, an expression over DEFINE_VARs for a symbolic one. Axis
// lists that are never symbolic (PERMUTE's order, FLIP's and REDUCE_AXIS's axes) are args.
#ifndef POLYGRAD_IR_OPS_HPP
#define POLYGRAD_IR_OPS_HPP

#include <cstdint>
#include <string_view>

namespace polygrad {

/// Op groups, a bit set per op.
namespace opg {
inline constexpr uint32_t tensor = 1u << 0;       ///< tensor-level graph
inline constexpr uint32_t kernel = 1u << 1;       ///< kernel-level graph
inline constexpr uint32_t movement = 1u << 2;     ///< view change, no compute
inline constexpr uint32_t unary = 1u << 3;        ///< one-source ALU op
inline constexpr uint32_t binary = 1u << 4;       ///< two-source ALU op
inline constexpr uint32_t ternary = 1u << 5;      ///< three-source ALU op
inline constexpr uint32_t commutative = 1u << 6;  ///< binary op with op(a, b) == op(b, a)
inline constexpr uint32_t compare = 1u << 7;      ///< binary op with a bool result
inline constexpr uint32_t both = tensor | kernel;
inline constexpr uint32_t alu = unary | binary | ternary;
}  // namespace opg

// clang-format off
#define POLYGRAD_OPS(X)                                                                        \
  /* --- graph roots and values (both levels) ------------------------------------------ */   \
  X(SINK, opg::both, 0, -1, "groups outputs: srcs = the roots kept alive; void")              \
  X(CONST, opg::both, 0, 0, "constant: arg int64 (bool, ints; uint64 as bit pattern) or double") \
  X(VCONST, opg::kernel, 0, 0, "vector constant: arg vector<int64> of lanes (int dtypes)")    \
  X(DEFINE_VAR, opg::both, 0, 0, "symbolic int scalar: arg Var{name, vmin, vmax}")            \
  X(BIND, opg::tensor, 2, 2, "srcs (DEFINE_VAR, CONST value): a variable bound to a value")   \
  X(CAST, opg::both, 1, 1, "src converted to dtype (C semantics)")                            \
  X(BITCAST, opg::both, 1, 1, "src's bits reinterpreted as dtype (same itemsize)")            \
  /* --- tensor level ------------------------------------------------------------------ */   \
  X(BUFFER, opg::tensor, 0, 0, "device buffer: arg vector<int64> {id, element count}")     \
  X(IOTA, opg::tensor, 0, 0, "0, 1, ..., n - 1 along its one axis: arg int64 n; int dtype")    \
  X(RESHAPE, opg::tensor | opg::movement, 1, -1, "srcs (x, dim...): new shape")               \
  X(PERMUTE, opg::tensor | opg::movement, 1, 1, "src x; arg vector<int64> axis order")        \
  X(EXPAND, opg::tensor | opg::movement, 1, -1, "srcs (x, dim...): broadcast shape")          \
  X(PAD, opg::tensor | opg::movement, 1, -1, "srcs (x, before0, after0, before1, ...)")      \
  X(SHRINK, opg::tensor | opg::movement, 1, -1, "srcs (x, begin0, end0, begin1, ...)")       \
  X(FLIP, opg::tensor | opg::movement, 1, 1, "src x; arg vector<int64> flipped axes")         \
  X(REDUCE_AXIS, opg::tensor, 1, 1, "src x; arg vector<int64> {alu op, axis...}")             \
  X(ASSIGN, opg::tensor, 2, 3, "srcs (target, value[, view of it]): write; arg int64 serial") \
  X(CONTIGUOUS, opg::tensor, 1, 1, "src materialised in a contiguous buffer")                 \
  X(COPY, opg::tensor, 1, 1, "src copied to device: arg string device name")                  \
  X(DETACH, opg::tensor, 1, 1, "src without gradient")                                        \
  /* --- kernel level ------------------------------------------------------------------ */   \
  X(DEFINE_GLOBAL, opg::kernel, 0, 0, "buffer parameter: arg int64 slot; pointer dtype")      \
  X(DEFINE_LOCAL, opg::kernel, 0, 0, "shared array: arg vector<int64> {id, element count}")   \
  X(DEFINE_REG, opg::kernel, 0, 0, "private array: arg int64 element count; pointer dtype")   \
  X(SPECIAL, opg::kernel, 1, 1, "launch index: src size; arg string name (gidx0, lidx1)")    \
  X(RANGE, opg::kernel, 1, 1, "loop variable 0..src-1: src end (int); arg int64 loop id")     \
  X(END, opg::kernel, 1, -1, "closes ranges: srcs (value or store, RANGE...)")                \
  X(REDUCE, opg::kernel, 1, -1,                                                              \
    "srcs (value, RANGE...[, SPECIAL]): accumulate; arg int64 alu op; a last SPECIAL thread "  \
    "index: the group's threads each reduce a share, then join their partials")               \
  X(INDEX, opg::kernel, 2, 3, "srcs (ptr, offset[, gate]): element pointer")                 \
  X(LOAD, opg::kernel, 1, 3, "srcs (ptr[, alt, gate]): value at ptr")                         \
  X(STORE, opg::kernel, 2, 3, "srcs (ptr, value[, gate]): void")                              \
  X(IF, opg::kernel, 1, 2, "srcs (cond[, barrier]): block start; void")                      \
  X(ENDIF, opg::kernel, 1, 1, "src the IF it closes; void")                                  \
  X(BARRIER, opg::kernel, 0, -1, "workgroup barrier after srcs; void")                        \
  X(VECTORIZE, opg::kernel, 1, -1, "srcs: one scalar per lane")                               \
  X(GEP, opg::kernel, 1, 1, "src vector; arg vector<int64> lanes taken")                      \
  X(WMMA, opg::kernel, 3, 3,                                                                \
    "srcs (A, B, C), one thread's tensor-core fragments: D = A * B + C; arg int64 the index "  \
    "into the target's tensor_cores")                                                           \
  /* --- unary ALU ---------------------------------------------------------------------- */   \
  X(NEG, opg::both | opg::unary, 1, 1, "-x")                                                  \
  X(NOT, opg::both | opg::unary, 1, 1, "logical (bool) or bitwise (ints) not")                \
  X(RECIP, opg::both | opg::unary, 1, 1, "1/x (floats)")                                      \
  X(SQRT, opg::both | opg::unary, 1, 1, "square root (floats)")                               \
  X(EXP2, opg::both | opg::unary, 1, 1, "2^x (floats)")                                       \
  X(LOG2, opg::both | opg::unary, 1, 1, "log2(x) (floats)")                                   \
  X(SIN, opg::both | opg::unary, 1, 1, "sin(x) (floats)")                                     \
  X(TANH, opg::tensor | opg::unary, 1, 1, "tanh(x) (floats); expanded before scheduling")   \
  X(SIGMOID, opg::tensor | opg::unary, 1, 1, "1 / (1 + e^-x) (floats); expanded likewise")    \
  X(TRUNC, opg::both | opg::unary, 1, 1, "round toward zero (floats)")                        \
  /* --- binary ALU --------------------------------------------------------------------- */   \
  X(ADD, opg::both | opg::binary | opg::commutative, 2, 2, "a + b (ints wrap)")               \
  X(SUB, opg::both | opg::binary, 2, 2, "a - b (ints wrap)")                                  \
  X(MUL, opg::both | opg::binary | opg::commutative, 2, 2, "a * b (ints wrap)")               \
  X(FDIV, opg::both | opg::binary, 2, 2, "a / b (floats)")                                    \
  X(IDIV, opg::both | opg::binary, 2, 2, "a / b rounding toward zero (ints)")                 \
  X(MOD, opg::both | opg::binary, 2, 2, "a % b with the sign of a (ints)")                    \
  X(MAX, opg::both | opg::binary | opg::commutative, 2, 2, "max(a, b)")                       \
  X(CMPLT, opg::both | opg::binary | opg::compare, 2, 2, "a < b; bool")                       \
  X(CMPNE, opg::both | opg::binary | opg::compare | opg::commutative, 2, 2, "a != b; bool")   \
  X(CMPEQ, opg::both | opg::binary | opg::compare | opg::commutative, 2, 2, "a == b; bool")   \
  X(AND, opg::both | opg::binary | opg::commutative, 2, 2, "a & b (bool, ints)")              \
  X(OR, opg::both | opg::binary | opg::commutative, 2, 2, "a | b (bool, ints)")               \
  X(XOR, opg::both | opg::binary | opg::commutative, 2, 2, "a ^ b (bool, ints)")              \
  X(SHL, opg::both | opg::binary, 2, 2, "a << b (ints, 0 <= b < bits)")                       \
  X(SHR, opg::both | opg::binary, 2, 2, "a >> b (ints, arithmetic when signed)")              \
  /* --- ternary ALU -------------------------------------------------------------------- */   \
  X(WHERE, opg::both | opg::ternary, 3, 3, "c ? a : b; srcs (c bool, a, b)")                  \
  X(MULACC, opg::both | opg::ternary, 3, 3, "a * b + c")
// clang-format on

/// The op of a UOp.
enum class Op : uint8_t {
#define PG_X(name, groups, min_src, max_src, doc) name,
  POLYGRAD_OPS(PG_X)
#undef PG_X
};

/// Number of ops.
inline constexpr int kOpCount = 0
#define PG_X(name, groups, min_src, max_src, doc) +1
    POLYGRAD_OPS(PG_X)
#undef PG_X
    ;

/// Static facts about one op, from POLYGRAD_OPS.
struct OpInfo {
  std::string_view name;
  uint32_t groups;
  int min_srcs;
  int max_srcs;  ///< -1: unbounded
  std::string_view doc;
};

inline constexpr OpInfo kOpInfo[] = {
#define PG_X(name, groups, min_src, max_src, doc) {#name, groups, min_src, max_src, doc},
    POLYGRAD_OPS(PG_X)
#undef PG_X
};

constexpr const OpInfo& op_info(Op op) {
  return kOpInfo[static_cast<int>(op)];
}
constexpr std::string_view op_name(Op op) {
  return op_info(op).name;
}
constexpr bool op_in(Op op, uint32_t groups) {
  return (op_info(op).groups & groups) != 0;
}
constexpr bool is_alu(Op op) {
  return op_in(op, opg::alu);
}
constexpr bool is_binary(Op op) {
  return op_in(op, opg::binary);
}
constexpr bool is_commutative(Op op) {
  return op_in(op, opg::commutative);
}
constexpr bool is_compare(Op op) {
  return op_in(op, opg::compare);
}
constexpr bool is_movement(Op op) {
  return op_in(op, opg::movement);
}

}  // namespace polygrad

#endif  // POLYGRAD_IR_OPS_HPP
