// The verifier: per-op rules on source counts (from POLYGRAD_OPS), dtypes and args.
#include "ir/error.hpp"
#include "ir/graph.hpp"

namespace polygrad {

namespace {

class Checker {
 public:
  explicit Checker(const UOp& u) : u_(u) {}

  void expect(bool ok, const std::string& what) const {
    if (!ok) ir_error("verify: " + node_to_string(u_) + ": " + what);
  }
  void src_dtype(size_t i, DType t) const {
    expect(u_.src(i)->dtype() == t, "source " + std::to_string(i) + " has dtype " +
                                        u_.src(i)->dtype().name() + ", expected " + t.name());
  }
  void src_int(size_t i) const {
    DType t = u_.src(i)->dtype();
    expect(t.is_int(),
           "source " + std::to_string(i) + " has dtype " + t.name() + ", expected an int type");
  }
  void result(bool ok, const char* want) const {
    expect(ok, std::string("result dtype must be ") + want);
  }
  template <typename T>
  void arg(const char* want) const {
    expect(std::holds_alternative<T>(u_.arg()), std::string("arg must be ") + want);
  }

 private:
  const UOp& u_;
};

void check_alu(const UOp& u, const Checker& c) {
  Op op = u.op();
  DType t = u.dtype();
  if (op == Op::WHERE) {
    c.expect(u.src(0)->dtype().scalar() == PG_DTYPE_BOOL, "condition must be bool");
    c.src_dtype(1, t);
    c.src_dtype(2, t);
    return;
  }
  DType operand = is_compare(op) ? u.src(0)->dtype() : t;
  for (size_t i = 0; i < u.nsrcs(); ++i) c.src_dtype(i, operand);
  if (is_compare(op)) c.result(t == dtypes::bool_.vec(operand.lanes()), "bool");
  switch (op) {
    case Op::RECIP:
    case Op::SQRT:
    case Op::EXP2:
    case Op::LOG2:
    case Op::SIN:
    case Op::TANH:
    case Op::SIGMOID:
    case Op::TRUNC:
    case Op::FDIV:
      c.result(t.scalar_type().is_float(), "a float type");
      break;
    case Op::IDIV:
    case Op::MOD:
    case Op::SHL:
    case Op::SHR:
      c.result(t.scalar_type().is_int(), "an int type");
      break;
    case Op::AND:
    case Op::OR:
    case Op::XOR:
    case Op::NOT:
      c.result(t.scalar_type().is_int() || t.scalar_type().is_bool(), "an int or bool type");
      break;
    default:
      c.result(!t.is_ptr() && !t.is_void(), "a value type");
  }
}

void check_node(const UOp& u) {
  Checker c(u);
  const OpInfo& info = op_info(u.op());
  int n = static_cast<int>(u.nsrcs());
  c.expect(n >= info.min_srcs && (info.max_srcs < 0 || n <= info.max_srcs),
           std::to_string(n) + " sources, expected " + std::to_string(info.min_srcs) +
               (info.max_srcs < 0 ? " or more" : ".." + std::to_string(info.max_srcs)));
  for (const UOpRef& s : u.srcs()) c.expect(bool(s), "null source");
  DType t = u.dtype();
  if (is_alu(u.op())) return check_alu(u, c);
  if (is_movement(u.op())) {
    for (size_t i = 1; i < u.nsrcs(); ++i) c.src_dtype(i, dtypes::index);
    c.src_dtype(0, t);
  }
  switch (u.op()) {
    case Op::SINK:
      c.result(t.is_void(), "void");
      break;
    case Op::CONST:
      c.result(!t.is_void() && !t.is_ptr(), "a value type");
      if (t.scalar_type().is_float())
        c.arg<double>("a double for float dtypes");
      else
        c.arg<int64_t>("an int64 for bool and int dtypes");
      break;
    case Op::DEFINE_VAR:
      c.result(t.is_int(), "an int type");
      c.arg<Var>("a Var");
      c.expect(u.arg_var().vmin <= u.arg_var().vmax, "vmin > vmax");
      break;
    case Op::BIND:
      c.expect(u.src(0)->op() == Op::DEFINE_VAR, "source 0 must be a DEFINE_VAR");
      break;
    case Op::BITCAST:
      c.expect(u.src(0)->dtype().itemsize() == t.itemsize(), "itemsize differs from source's");
      break;
    case Op::CAST:
      c.result(!t.is_void(), "not void");
      break;
    case Op::BUFFER:
      c.arg<std::vector<int64_t>>("{id, element count}");
      c.expect(u.arg_ints().size() == 2 && u.arg_ints()[1] >= 0, "arg must be {id, count >= 0}");
      break;
    case Op::PAD:
    case Op::SHRINK:
      c.expect(n % 2 == 1, "needs a (begin, end) pair per axis");
      break;
    case Op::PERMUTE:
    case Op::FLIP:
      c.arg<std::vector<int64_t>>("an axis list");
      break;
    case Op::REDUCE_AXIS: {
      c.arg<std::vector<int64_t>>("{alu op, axis...}");
      const auto& a = u.arg_ints();
      c.expect(!a.empty() && a[0] >= 0 && a[0] < kOpCount && is_binary(static_cast<Op>(a[0])),
               "arg[0] must be a binary alu op");
      break;
    }
    case Op::ASSIGN:
      c.src_dtype(1, u.src(0)->dtype());
      break;
    case Op::DEFINE_LOCAL:
      c.result(t.is_ptr(), "a pointer");
      c.arg<std::vector<int64_t>>("vector<int64> {id, element count}");
      break;
    case Op::DEFINE_GLOBAL:
    case Op::DEFINE_REG:
      c.result(t.is_ptr(), "a pointer");
      c.arg<int64_t>("an int64");
      break;
    case Op::RANGE:
    case Op::SPECIAL:
      c.result(t.is_int(), "an int type");
      c.src_dtype(0, t);
      break;
    case Op::INDEX:
      c.expect(u.src(0)->dtype().is_ptr(), "source 0 must be a pointer");
      c.src_int(1);
      c.result(t == u.src(0)->dtype(), "source 0's pointer type");
      break;
    case Op::LOAD:
      c.expect(u.src(0)->dtype().is_ptr(), "source 0 must be a pointer");
      c.result(t == u.src(0)->dtype().base(), "the pointee type");
      break;
    case Op::STORE:
      c.expect(u.src(0)->dtype().is_ptr(), "source 0 must be a pointer");
      c.result(t.is_void(), "void");
      break;
    case Op::REDUCE:
      c.arg<int64_t>("an alu op");
      for (size_t i = 1; i < u.nsrcs(); ++i)
        c.expect(u.src(i)->op() == Op::RANGE ||
                     (i + 1 == u.nsrcs() && i > 1 && u.src(i)->op() == Op::SPECIAL),
                 "sources after the first must be RANGEs (and a last SPECIAL thread index)");
      break;
    case Op::VECTORIZE:
      c.result(t.lanes() == n, "a vector of one lane per source");
      break;
    case Op::GEP:
      c.arg<std::vector<int64_t>>("a lane list");
      break;
    default:
      break;
  }
}

}  // namespace

void verify(const UOpRef& root) {
  for (const UOp* u : toposort(root)) check_node(*u);
}

}  // namespace polygrad
