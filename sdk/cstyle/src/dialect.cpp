// Default hooks of Dialect, the C type table, and the render() entry point.
#include "writer.hpp"

namespace polygrad::cstyle {

std::string Dialect::math(pg_op op, bool is_double, const std::string& x) const {
  const char* name = nullptr;
  switch (op) {
    case PG_OP_EXP2:
      name = "__builtin_exp2";
      break;
    case PG_OP_LOG2:
      name = "__builtin_log2";
      break;
    case PG_OP_SIN:
      name = "__builtin_sin";
      break;
    case PG_OP_SQRT:
      name = "__builtin_sqrt";
      break;
    case PG_OP_TRUNC:
      name = "__builtin_trunc";
      break;
    default:
      sdk::fail(PG_ERR_UNSUPPORTED,
                std::string("no math function for ") + sdk::op_name(op) + " in this dialect");
  }
  return std::string(name) + (is_double ? "" : "f") + "(" + x + ")";
}

std::string Dialect::vector_type(const std::string& lane_type, int lanes) const {
  std::string name = "pg_";
  for (char c : lane_type) name += (c == ' ') ? '_' : c;
  return name + "x" + std::to_string(lanes);
}

std::string Dialect::vector_typedef(const std::string& lane_type, int lanes) const {
  return "typedef " + lane_type + " " + vector_type(lane_type, lanes) +
         " __attribute__((ext_vector_type(" + std::to_string(lanes) + ")));\n";
}

std::string Dialect::vector_literal(const std::string& type,
                                    const std::vector<std::string>& lanes) const {
  std::string out = "(" + type + "){";
  for (size_t l = 0; l < lanes.size(); ++l) out += (l ? ", " : "") + lanes[l];
  return out + "}";
}

DialectTable c_table() {
  DialectTable t;
  t.type_names[PG_DTYPE_VOID] = "void";
  t.type_names[PG_DTYPE_BOOL] = "_Bool";
  t.type_names[PG_DTYPE_INT8] = "signed char";
  t.type_names[PG_DTYPE_INT16] = "short";
  t.type_names[PG_DTYPE_INT32] = "int";
  t.type_names[PG_DTYPE_INT64] = "long long";
  t.type_names[PG_DTYPE_UINT8] = "unsigned char";
  t.type_names[PG_DTYPE_UINT16] = "unsigned short";
  t.type_names[PG_DTYPE_UINT32] = "unsigned int";
  t.type_names[PG_DTYPE_UINT64] = "unsigned long long";
  t.type_names[PG_DTYPE_FLOAT16] = "unsigned short";
  t.type_names[PG_DTYPE_BFLOAT16] = "unsigned short";
  t.type_names[PG_DTYPE_FLOAT32] = "float";
  t.type_names[PG_DTYPE_FLOAT64] = "double";
  return t;
}

uint64_t supported_dtype_mask(const Dialect& dialect) {
  uint64_t mask = 0;
  for (uint32_t dt = PG_DTYPE_BOOL; dt < PG_DTYPE_COUNT; ++dt)
    if (dialect.table().type_names[dt] != nullptr) mask |= uint64_t{1} << dt;
  return mask;
}

std::string render(const pg_kernel_program& program, const Dialect& dialect) {
  return detail::Writer(program, dialect).run();
}

}  // namespace polygrad::cstyle

namespace polygrad::cstyle {

std::string Dialect::atomic_add(pg_dtype dtype, const std::string& ptr,
                                const std::string& value) const {
  switch (dtype) {
    case PG_DTYPE_INT32:
    case PG_DTYPE_INT64:
    case PG_DTYPE_UINT32:
    case PG_DTYPE_UINT64:
      return "__atomic_fetch_add(" + ptr + ", " + value + ", __ATOMIC_RELAXED);";
    case PG_DTYPE_FLOAT32:
    case PG_DTYPE_FLOAT64: {
      // Add to the value read, then store it only if nothing changed it in between; the
      // compare-exchange refreshes `old` when something did.
      const bool f64 = dtype == PG_DTYPE_FLOAT64;
      const std::string bits = f64 ? "unsigned long long" : "unsigned int";
      const std::string type = f64 ? "double" : "float";
      const std::string copy = table().memcpy_name;
      return "{ " + bits + " pg_old = __atomic_load_n((" + bits + "*)" + ptr +
             ", __ATOMIC_RELAXED), pg_new; " + type + " pg_sum; do { " + copy +
             "(&pg_sum, &pg_old, sizeof pg_sum); pg_sum += " + value + "; " + copy +
             "(&pg_new, &pg_sum, sizeof pg_new); } while (!__atomic_compare_exchange_n((" + bits +
             "*)" + ptr + ", &pg_old, pg_new, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); }";
    }
    default:
      return "";
  }
}

}  // namespace polygrad::cstyle
