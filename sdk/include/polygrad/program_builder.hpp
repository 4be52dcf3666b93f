// polygrad plugin SDK: build kernel programs by hand (header-only).
//
// Used by the conformance kit, by plugin tests and by anyone who wants to drive a plugin
// without the polygrad compiler:
//
//   polygrad::sdk::ProgramBuilder b("add_f32");
//   auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
//   auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
//   auto i = b.special(PG_SPECIAL_GLOBAL, 0);
//   auto v = b.load(b.index(x, i));
//   b.store(b.index(out, i), b.binary(PG_OP_ADD, v, v));
//   const pg_kernel_program& prog = b.program();
#ifndef POLYGRAD_PROGRAM_BUILDER_HPP
#define POLYGRAD_PROGRAM_BUILDER_HPP

#include <polygrad/plugin.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace polygrad::sdk {

/// Appends instructions and returns their indices; program() gives a view valid while the
/// builder lives and is not modified.
class ProgramBuilder {
 public:
  using Ref = uint32_t;

  explicit ProgramBuilder(std::string name) : name_(std::move(name)) {}

  /// Append a raw instruction.
  Ref emit(pg_op op, pg_dtype dtype, std::initializer_list<Ref> srcs, pg_arg arg = {0},
           uint8_t vcount = 1, pg_addrspace space = PG_ADDR_NONE, int64_t arg2 = 0) {
    return emit_v(op, dtype, std::vector<Ref>(srcs), arg, vcount, space, arg2);
  }
  Ref emit_v(pg_op op, pg_dtype dtype, const std::vector<Ref>& srcs, pg_arg arg = {0},
             uint8_t vcount = 1, pg_addrspace space = PG_ADDR_NONE, int64_t arg2 = 0) {
    pg_instruction in{};
    in.op = static_cast<uint16_t>(op);
    in.dtype = static_cast<uint8_t>(dtype);
    in.vcount = vcount;
    in.addrspace = static_cast<uint8_t>(space);
    in.src_start = static_cast<uint32_t>(operands_.size());
    in.src_count = static_cast<uint32_t>(srcs.size());
    in.arg = arg;
    in.arg2 = arg2;
    operands_.insert(operands_.end(), srcs.begin(), srcs.end());
    instructions_.push_back(in);
    return static_cast<Ref>(instructions_.size() - 1);
  }

  Ref param_buffer(uint32_t slot, pg_dtype dtype) {
    if (slot + 1 > buffer_count_) buffer_count_ = slot + 1;
    return emit(PG_OP_PARAM_BUFFER, dtype, {}, arg_i(slot), 1, PG_ADDR_GLOBAL);
  }
  Ref param_scalar(uint32_t slot, pg_dtype dtype) {
    if (slot + 1 > scalar_count_) scalar_count_ = slot + 1;
    return emit(PG_OP_PARAM_SCALAR, dtype, {}, arg_i(slot));
  }
  Ref define_local(pg_dtype dtype, int64_t count) {
    return emit(PG_OP_DEFINE_LOCAL, dtype, {}, arg_i(count), 1, PG_ADDR_LOCAL);
  }
  Ref define_reg(pg_dtype dtype, int64_t count) {
    return emit(PG_OP_DEFINE_REG, dtype, {}, arg_i(count), 1, PG_ADDR_REG);
  }
  Ref special(pg_special_kind kind, int dim) {
    return emit(PG_OP_SPECIAL, PG_DTYPE_INT32, {}, arg_i(dim), 1, PG_ADDR_NONE, kind);
  }
  Ref const_i(pg_dtype dtype, int64_t v, uint8_t vcount = 1) {
    return emit(PG_OP_CONST, dtype, {}, arg_i(v), vcount);
  }
  Ref const_f(pg_dtype dtype, double v, uint8_t vcount = 1) {
    pg_arg a;
    a.f = v;
    return emit(PG_OP_CONST, dtype, {}, a, vcount);
  }
  Ref range(Ref end, int64_t id) { return emit(PG_OP_RANGE, dtype_of(end), {end}, arg_i(id)); }
  void end_range(Ref r) { emit(PG_OP_END_RANGE, PG_DTYPE_VOID, {r}); }
  Ref if_(Ref cond) { return emit(PG_OP_IF, PG_DTYPE_VOID, {cond}); }
  void end_if(Ref i) { emit(PG_OP_END_IF, PG_DTYPE_VOID, {i}); }
  void barrier() { emit(PG_OP_BARRIER, PG_DTYPE_VOID, {}); }

  /// Pointer `ptr` advanced by `offset` elements; keeps the pointer's type and space.
  Ref index(Ref ptr, Ref offset) {
    const pg_instruction& p = instructions_[ptr];
    return emit(PG_OP_INDEX, static_cast<pg_dtype>(p.dtype), {ptr, offset}, arg_i(0), 1,
                static_cast<pg_addrspace>(p.addrspace));
  }
  /// Load `vcount` consecutive elements of the pointee type.
  Ref load(Ref ptr, uint8_t vcount = 1) {
    return emit(PG_OP_LOAD, dtype_of(ptr), {ptr}, arg_i(0), vcount);
  }
  /// Gated load of `alt`'s vcount elements: `alt` where `gate` (one bool) is false.
  Ref load_gated(Ref ptr, Ref alt, Ref gate) {
    return emit(PG_OP_LOAD, dtype_of(ptr), {ptr, alt, gate}, arg_i(0), instructions_[alt].vcount);
  }
  /// Store all of `value`'s lanes at `ptr` (the STORE's vcount is the value's, as plugin.h
  /// requires). `hints`: pg_store_hints bits (PG_STORE_STREAM).
  void store(Ref ptr, Ref value, int64_t hints = 0) {
    emit(PG_OP_STORE, PG_DTYPE_VOID, {ptr, value}, arg_i(hints), instructions_[value].vcount);
  }
  /// Store all of `value`'s lanes where `gate` (one bool) is true.
  void store_gated(Ref ptr, Ref value, Ref gate) {
    emit(PG_OP_STORE, PG_DTYPE_VOID, {ptr, value, gate}, arg_i(0), instructions_[value].vcount);
  }

  /// Unary, binary and ternary ALU ops; the result type is the first value source's
  /// (bool for comparisons, the branches' for WHERE).
  Ref unary(pg_op op, Ref a) {
    return emit(op, dtype_of(a), {a}, arg_i(0), instructions_[a].vcount);
  }
  Ref binary(pg_op op, Ref a, Ref b) {
    bool cmp = op == PG_OP_CMPLT || op == PG_OP_CMPNE || op == PG_OP_CMPEQ;
    return emit(op, cmp ? PG_DTYPE_BOOL : dtype_of(a), {a, b}, arg_i(0), instructions_[a].vcount);
  }
  Ref ternary(pg_op op, Ref a, Ref b, Ref c) {
    pg_dtype dt = op == PG_OP_WHERE ? dtype_of(b) : dtype_of(a);
    return emit(op, dt, {a, b, c}, arg_i(0), instructions_[b].vcount);
  }
  Ref cast(pg_op op, pg_dtype to, Ref a) {
    return emit(op, to, {a}, arg_i(0), instructions_[a].vcount);
  }
  Ref vectorize(const std::vector<Ref>& lanes) {
    return emit_v(PG_OP_VECTORIZE, dtype_of(lanes.at(0)), lanes, arg_i(0),
                  static_cast<uint8_t>(lanes.size()));
  }
  Ref gep(Ref vec, int64_t lane) { return emit(PG_OP_GEP, dtype_of(vec), {vec}, arg_i(lane)); }

  pg_dtype dtype_of(Ref r) const { return static_cast<pg_dtype>(instructions_.at(r).dtype); }
  void set_local_size(uint32_t x, uint32_t y, uint32_t z) { local_ = {x, y, z}; }
  /// The kernel ISA the program is stamped with (default: the SDK's newest).
  void set_isa_version(uint32_t isa) { isa_ = isa; }

  /// The program view. Pointers stay valid until the builder is changed or destroyed.
  const pg_kernel_program& program() {
    program_ = pg_kernel_program{};
    program_.struct_size = sizeof(pg_kernel_program);
    program_.isa_version = isa_;
    program_.name = name_.c_str();
    program_.instructions = instructions_.data();
    program_.instruction_count = static_cast<uint32_t>(instructions_.size());
    program_.operands = operands_.data();
    program_.operand_count = static_cast<uint32_t>(operands_.size());
    program_.buffer_count = buffer_count_;
    program_.scalar_count = scalar_count_;
    for (int d = 0; d < 3; ++d) program_.local_size[d] = local_[d];
    return program_;
  }

  std::vector<pg_instruction>& instructions() { return instructions_; }
  std::vector<uint32_t>& operands() { return operands_; }

 private:
  static pg_arg arg_i(int64_t v) {
    pg_arg a;
    a.i = v;
    return a;
  }
  std::string name_;
  std::vector<pg_instruction> instructions_;
  std::vector<uint32_t> operands_;
  uint32_t buffer_count_ = 0;
  uint32_t scalar_count_ = 0;
  std::vector<uint32_t> local_ = {1, 1, 1};
  uint32_t isa_ = PG_KERNEL_ISA_VERSION;
  pg_kernel_program program_{};
};

}  // namespace polygrad::sdk

#endif  // POLYGRAD_PROGRAM_BUILDER_HPP
