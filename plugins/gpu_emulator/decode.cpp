// Kernel program -> the emulator's decoded Program: register rows, handlers, memory arrays,
// block structure, and the checks that make running it safe.
#include <polygrad/plugin.hpp>

#include <cstring>

#include "handlers.hpp"
#include "numeric.hpp"
#include "program.hpp"
#include "target.hpp"

namespace polygrad::gpu_emu {

using sdk::dtype_kind;
using sdk::dtype_name;
using sdk::dtype_size;
using sdk::fail;
using sdk::op_name;

namespace {

constexpr uint32_t kNone = 0xffffffffu;
/// Register arrays of one thread hold at most this many bytes (a GPU thread's private memory
/// is small; the emulator keeps one copy per thread of a batch).
constexpr uint64_t kMaxRegBytes = 64 * 1024;

uint64_t align16(uint64_t v) {
  return (v + 15) & ~uint64_t{15};
}

/// The slot bits of constant `arg` of dtype `dt`.
int64_t constant_bits(pg_dtype dt, pg_arg arg) {
  Slot raw;
  if (dtype_kind(dt) == 'f')
    raw.f = arg.f;
  else
    raw.i = arg.i;
  return with_dtype(dt, [&]<pg_dtype DT>() { return Type<DT>::fix(raw).i; });
}

class Decoder {
 public:
  explicit Decoder(const pg_kernel_program& p) : p_(p), n_(p.instruction_count) {
    prog_.name = p.name;
    prog_.buffer_count = p.buffer_count;
    prog_.scalar_count = p.scalar_count;
    for (int d = 0; d < 3; ++d) prog_.local_size[d] = p.local_size[d];
    prog_.source.assign(p.instructions, p.instructions + n_);
    row_.assign(n_, kNone);
    array_.assign(n_, kNone);
    code_index_.assign(n_, kNone);
  }

  Program run() {
    for (uint32_t i = 0; i < n_; ++i) decode(i);
    if (!open_.empty())
      fail(PG_ERR_INVALID_ARGUMENT, prog_.where(open_.back()) + " is never closed");
    return std::move(prog_);
  }

 private:
  const pg_instruction& at(uint32_t i) const { return p_.instructions[i]; }
  uint32_t src(const pg_instruction& in, uint32_t k) const { return p_.operands[in.src_start + k]; }
  [[noreturn]] void bad(uint32_t i, const std::string& what) const {
    fail(PG_ERR_INVALID_ARGUMENT, "gpu_emu: " + prog_.where(i) + ": " + what);
  }
  [[noreturn]] void unsupported(uint32_t i, const std::string& what) const {
    fail(PG_ERR_UNSUPPORTED, "gpu_emu: " + prog_.where(i) + ": " + what);
  }

  /// The register row of source k, with its lane step for a result of `lanes` lanes.
  /// A pointer is a source only where `pointer` says so (source 0 of a memory op).
  void use(Instr& d, uint32_t i, uint32_t k, uint32_t lanes, bool pointer = false) {
    const uint32_t s = src(at(i), k);
    if (row_[s] == kNone) bad(i, "source " + std::to_string(k) + " has no value");
    if ((at(s).addrspace != PG_ADDR_NONE) != pointer)
      bad(i, "source " + std::to_string(k) + (pointer ? " is not a pointer" : " is a pointer"));
    const uint32_t have = pointer ? 1 : at(s).vcount;
    if (have != 1 && have != lanes)
      bad(i, "source " + std::to_string(k) + " has " + std::to_string(have) +
                 " lanes, the result " + std::to_string(lanes));
    d.src[k] = row_[s];
    d.step[k] = have == 1 ? 0 : 1;
  }
  /// Source k must be one lane of an int (is_bool: bool) value.
  void scalar(uint32_t i, uint32_t k, bool is_bool) {
    const pg_instruction& s = at(src(at(i), k));
    const char kind = dtype_kind(s.dtype);
    if (s.vcount != 1 || s.addrspace != PG_ADDR_NONE ||
        (is_bool ? kind != 'b' : kind != 'i' && kind != 'u'))
      bad(i, "source " + std::to_string(k) + " must be one " + (is_bool ? "bool" : "int"));
  }
  /// The array source 0 points into; it must be a pointer.
  uint32_t pointer(uint32_t i) {
    const uint32_t s = src(at(i), 0);
    if (array_[s] == kNone)
      bad(i,
          "source 0 is not a pointer from PARAM_BUFFER, DEFINE_LOCAL, "
          "DEFINE_REG or INDEX");
    return array_[s];
  }
  uint32_t new_rows(uint32_t i, uint32_t lanes) {
    row_[i] = prog_.rows;
    prog_.rows += lanes;
    return row_[i];
  }
  void emit(uint32_t i, Instr d, bool hoist = false) {
    d.origin = i;
    if (hoist) {  // no sources: the same at every point of the program, set once per batch
      d.depth = 0;
      prog_.prologue.push_back(d);
      return;
    }
    d.depth = static_cast<uint8_t>(open_.size());
    code_index_[i] = static_cast<uint32_t>(prog_.code.size());
    prog_.code.push_back(d);
  }
  uint32_t define_array(uint32_t i, pg_addrspace space) {
    const pg_instruction& in = at(i);
    Array a;
    a.space = space;
    a.dtype = static_cast<pg_dtype>(in.dtype);
    a.origin = i;
    if (space == PG_ADDR_GLOBAL) {
      a.offset = static_cast<uint64_t>(in.arg.i);
    } else {
      if (in.arg.i < 1 || in.arg.i > (int64_t{1} << 24))
        unsupported(i, "array of " + std::to_string(in.arg.i) + " elements");
      a.count = in.arg.i;
      uint64_t& bytes = space == PG_ADDR_LOCAL ? prog_.local_bytes : prog_.reg_bytes;
      a.offset = align16(bytes);
      bytes = a.offset + static_cast<uint64_t>(a.count) * dtype_size(in.dtype);
      if (space == PG_ADDR_LOCAL) {
        a.shadow = prog_.local_elements;
        prog_.local_elements += static_cast<uint32_t>(a.count);
        if (prog_.local_bytes > kLocalMemoryBytes)
          unsupported(i, "the kernel's local arrays need " + std::to_string(prog_.local_bytes) +
                             " bytes; the device has " + std::to_string(kLocalMemoryBytes) +
                             " per group");
      } else if (prog_.reg_bytes > kMaxRegBytes) {
        unsupported(i, "the kernel's register arrays need " + std::to_string(prog_.reg_bytes) +
                           " bytes per thread; the emulator holds " + std::to_string(kMaxRegBytes));
      }
    }
    prog_.arrays.push_back(a);
    array_[i] = static_cast<uint32_t>(prog_.arrays.size() - 1);
    return array_[i];
  }

  void decode(uint32_t i);
  void decode_block(uint32_t i);
  void decode_memory(uint32_t i);
  void decode_wmma(uint32_t i);

  const pg_kernel_program& p_;
  const uint32_t n_;
  Program prog_;
  std::vector<uint32_t> row_;         ///< first register row of each value
  std::vector<uint32_t> array_;       ///< the array each pointer points into
  std::vector<uint32_t> code_index_;  ///< each instruction's place in Program::code
  std::vector<uint32_t> open_;        ///< RANGE and IF blocks not closed yet
};

void Decoder::decode(uint32_t i) {
  const pg_instruction& in = at(i);
  const auto op = static_cast<pg_op>(in.op);
  const auto dt = static_cast<pg_dtype>(in.dtype);
  const uint32_t lanes = in.vcount;
  if (lanes > kMaxLanes) unsupported(i, "more than " + std::to_string(kMaxLanes) + " lanes");
  const bool pointer_result = in.addrspace != PG_ADDR_NONE;
  if (pointer_result && op != PG_OP_PARAM_BUFFER && op != PG_OP_DEFINE_LOCAL &&
      op != PG_OP_DEFINE_REG && op != PG_OP_INDEX)
    unsupported(i, "a pointer can only come from PARAM_BUFFER, DEFINE_LOCAL, DEFINE_REG or INDEX");
  // The dtype the op works on: the first source's (comparisons, casts), the branches' (WHERE).
  const pg_dtype operand =
      in.src_count > 0 && op != PG_OP_WHERE ? static_cast<pg_dtype>(at(src(in, 0)).dtype) : dt;
  if (!sdk::op_defined_on(op, operand))
    unsupported(i, std::string(op_name(op)) + " is not defined on " + dtype_name(operand));
  Instr d;
  d.lanes = static_cast<uint8_t>(lanes);
  switch (op) {
    case PG_OP_PARAM_BUFFER:
    case PG_OP_DEFINE_LOCAL:
    case PG_OP_DEFINE_REG: {
      if (dt == PG_DTYPE_VOID) bad(i, "a pointer to void");
      const auto space = op == PG_OP_PARAM_BUFFER   ? PG_ADDR_GLOBAL
                         : op == PG_OP_DEFINE_LOCAL ? PG_ADDR_LOCAL
                                                    : PG_ADDR_REG;
      if (in.addrspace != space) bad(i, "the pointer's address space is not the op's");
      define_array(i, space);
      d.lanes = 1;
      d.dst = new_rows(i, 1);
      d.handler = const_handler();  // element 0
      emit(i, d, true);
      return;
    }
    case PG_OP_PARAM_SCALAR:
      if (lanes != 1 || dt == PG_DTYPE_VOID) bad(i, "a scalar parameter is one lane of a dtype");
      d.dst = new_rows(i, 1);
      d.imm = in.arg.i;
      d.handler = scalar_handler(dt);
      emit(i, d, true);
      return;
    case PG_OP_SPECIAL:
      if (lanes != 1 || dtype_kind(dt) != 'i') bad(i, "a launch index is one int32");
      d.dst = new_rows(i, 1);
      d.imm = in.arg.i | in.arg2 << 8;
      d.handler = special_handler();
      prog_.uses_special = true;
      emit(i, d, true);
      return;
    case PG_OP_CONST:
      if (dt == PG_DTYPE_VOID) bad(i, "a constant of void");
      d.dst = new_rows(i, lanes);
      d.imm = constant_bits(dt, in.arg);
      d.handler = const_handler();
      emit(i, d, true);
      return;
    case PG_OP_RANGE:
    case PG_OP_END_RANGE:
    case PG_OP_IF:
    case PG_OP_END_IF:
    case PG_OP_BARRIER:
      decode_block(i);
      return;
    case PG_OP_INDEX:
    case PG_OP_LOAD:
    case PG_OP_STORE:
    case PG_OP_ATOMIC_ADD:
      decode_memory(i);
      return;
    case PG_OP_WMMA:
      decode_wmma(i);
      return;
    case PG_OP_CAST:
    case PG_OP_BITCAST:
      use(d, i, 0, lanes);
      d.handler = op == PG_OP_CAST ? cast_handler(operand, dt) : bitcast_handler(operand, dt);
      if (d.handler == nullptr) bad(i, "BITCAST between dtypes of different sizes");
      break;
    case PG_OP_GEP:
      use(d, i, 0, at(src(in, 0)).vcount);
      if (lanes != 1 || in.arg.i < 0 || in.arg.i >= at(src(in, 0)).vcount)
        bad(i, "GEP takes one lane that its source has");
      d.imm = in.arg.i;
      d.handler = gep_handler();
      break;
    case PG_OP_VECTORIZE:
      d.array = static_cast<uint32_t>(prog_.lists.size());
      for (uint32_t k = 0; k < in.src_count; ++k) {
        const uint32_t s = src(in, k);
        if (row_[s] == kNone || at(s).vcount != 1 || at(s).addrspace != PG_ADDR_NONE)
          bad(i, "VECTORIZE takes scalar values");
        prog_.lists.push_back(row_[s]);
      }
      d.handler = vectorize_handler();
      break;
    case PG_OP_WHERE:
      for (uint32_t k = 0; k < 3; ++k) use(d, i, k, lanes);
      if (dtype_kind(at(src(in, 0)).dtype) != 'b') bad(i, "WHERE's condition must be bool");
      d.handler = where_handler();
      break;
    default:  // ALU
      for (uint32_t k = 0; k < in.src_count; ++k) use(d, i, k, lanes);
      d.handler = alu_handler(op, operand);
      if (d.handler == nullptr) unsupported(i, "not an op the emulator runs");
      break;
  }
  if (dt == PG_DTYPE_VOID) bad(i, "a value of void");
  d.dst = new_rows(i, lanes);
  emit(i, d);
}

void Decoder::decode_block(uint32_t i) {
  const pg_instruction& in = at(i);
  Instr d;
  switch (in.op) {
    case PG_OP_RANGE:
      scalar(i, 0, false);
      use(d, i, 0, 1);
      if (dtype_kind(in.dtype) != 'i' && dtype_kind(in.dtype) != 'u')
        bad(i, "a loop over non-ints");
      d.flow = Flow::range;
      d.dst = new_rows(i, 1);
      emit(i, d);
      open_.push_back(i);
      break;
    case PG_OP_IF:
      scalar(i, 0, true);
      use(d, i, 0, 1);
      d.flow = Flow::if_;
      emit(i, d);
      open_.push_back(i);
      break;
    case PG_OP_END_RANGE:
    case PG_OP_END_IF: {
      const uint32_t opener = src(in, 0);
      const uint16_t want = in.op == PG_OP_END_RANGE ? PG_OP_RANGE : PG_OP_IF;
      if (open_.empty() || open_.back() != opener || at(opener).op != want)
        bad(i, "does not close the innermost block");
      d.flow = in.op == PG_OP_END_RANGE ? Flow::end_range : Flow::end_if;
      Instr& start = prog_.code[code_index_[opener]];
      if (d.flow == Flow::end_range) {
        d.jump = code_index_[opener];  // back to the body: jump + 1
        d.src[0] = start.src[0];       // the bound
        d.dst = start.dst;             // the counter
      }
      emit(i, d);  // at the block's depth: it steers the block's threads
      open_.pop_back();
      prog_.code[code_index_[opener]].jump = static_cast<uint32_t>(prog_.code.size());
      break;
    }
    default:  // BARRIER
      d.flow = Flow::barrier;
      emit(i, d);
      break;
  }
  if (open_.size() > prog_.depth) prog_.depth = static_cast<uint32_t>(open_.size());
  if (prog_.depth > 250) unsupported(i, "blocks nested more than 250 deep");
}

void Decoder::decode_memory(uint32_t i) {
  const pg_instruction& in = at(i);
  const uint32_t a = pointer(i);
  const Array& array = prog_.arrays[a];
  const auto dt = static_cast<pg_dtype>(in.dtype);
  const uint32_t lanes = in.vcount;
  Instr d;
  d.lanes = static_cast<uint8_t>(lanes);
  d.array = a;
  use(d, i, 0, 1, true);
  switch (in.op) {
    case PG_OP_INDEX:
      scalar(i, 1, false);
      use(d, i, 1, 1);
      if (in.addrspace != array.space || dt != array.dtype || lanes != 1)
        bad(i, "INDEX keeps its pointer's dtype and address space");
      array_[i] = a;
      d.dst = new_rows(i, 1);
      d.handler = index_handler();
      break;
    case PG_OP_LOAD:
      if (dt != array.dtype)
        bad(i, "LOAD of " + std::string(dtype_name(dt)) + " through a pointer to " +
                   dtype_name(array.dtype));
      if (in.src_count == 3) {
        use(d, i, 1, lanes);
        use(d, i, 2, 1);
      }
      d.dst = new_rows(i, lanes);
      d.handler = load_handler(dt, array.space, in.src_count == 3);
      break;
    case PG_OP_STORE: {
      const pg_dtype value = static_cast<pg_dtype>(at(src(in, 1)).dtype);
      if (value != array.dtype)
        bad(i, "STORE of " + std::string(dtype_name(value)) + " through a pointer to " +
                   dtype_name(array.dtype));
      use(d, i, 1, lanes);
      if (in.src_count == 3) use(d, i, 2, 1);
      d.handler = store_handler(array.dtype, array.space, in.src_count == 3);
      break;
    }
    default:  // ATOMIC_ADD
      if (dt != array.dtype)
        bad(i, "ATOMIC_ADD of " + std::string(dtype_name(dt)) + " through a pointer to " +
                   dtype_name(array.dtype));
      use(d, i, 1, 1);
      d.handler = atomic_handler(dt, array.space);
      if (d.handler == nullptr)
        unsupported(i, "ATOMIC_ADD takes 32- and 64-bit ints and floats in global or local memory");
      if (array.space == PG_ADDR_GLOBAL && dtype_kind(dt) == 'f') prog_.float_atomics = true;
      break;
  }
  emit(i, d);
}

void Decoder::decode_wmma(uint32_t i) {
  const pg_instruction& in = at(i);
  if (in.arg.i < 0 || in.arg.i >= kTensorCoreCount)
    unsupported(i, "tensor core " + std::to_string(in.arg.i) + " is not declared (0 and 1 are)");
  const pg_tensor_core& tc = tensor_core(static_cast<uint32_t>(in.arg.i));
  const uint32_t la = tc.m * tc.k / tc.threads, lb = tc.k * tc.n / tc.threads,
                 lc = tc.m * tc.n / tc.threads;
  const pg_instruction &a = at(src(in, 0)), &b = at(src(in, 1)), &c = at(src(in, 2));
  if (a.dtype != tc.dtype_a || b.dtype != tc.dtype_b || c.dtype != tc.dtype_c ||
      in.dtype != tc.dtype_c || a.vcount != la || b.vcount != lb || c.vcount != lc ||
      in.vcount != lc)
    bad(i, std::string("tensor core ") + std::to_string(in.arg.i) + " takes A " +
               dtype_name(tc.dtype_a) + " x" + std::to_string(la) + ", B " +
               dtype_name(tc.dtype_b) + " x" + std::to_string(lb) + ", C and D " +
               dtype_name(tc.dtype_c) + " x" + std::to_string(lc) + " per thread");
  Instr d;
  d.lanes = static_cast<uint8_t>(lc);
  d.flow = Flow::wmma;
  d.imm = in.arg.i;
  use(d, i, 0, la);
  use(d, i, 1, lb);
  use(d, i, 2, lc);
  d.dst = new_rows(i, lc);
  prog_.has_wmma = true;
  emit(i, d);
}

}  // namespace

std::string Program::where(uint32_t origin) const {
  std::string s = "kernel '" + name + "' instruction " + std::to_string(origin);
  if (origin < source.size())
    s += std::string(" (") + op_name(source[origin].op) + " " + dtype_name(source[origin].dtype) +
         ")";
  return s;
}

Program decode(const pg_kernel_program& p) {
  return Decoder(p).run();
}

}  // namespace polygrad::gpu_emu
