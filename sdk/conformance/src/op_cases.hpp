// The data-driven op harness: every case is one OpCase row in a table. A case names the
// op-table rows it exercises, the dtypes it applies to, whether PG_ERR_UNSUPPORTED is
// acceptable, and a maker that builds its kernels (program, inputs, expected output computed
// in plain C++) for one dtype.
#ifndef POLYGRAD_CONFORMANCE_OP_CASES_HPP
#define POLYGRAD_CONFORMANCE_OP_CASES_HPP

#include <polygrad/plugin.h>
#include <polygrad/program_builder.hpp>

#include <string>
#include <vector>

#include "session.hpp"
#include "values.hpp"

namespace polygrad::conformance::detail {

/// One kernel to run: buffer slot 0 is the output (pre-filled), the rest are inputs.
struct Kernel {
  std::string label;  ///< "ADD float32", "CAST float32->int8"
  sdk::ProgramBuilder program{"k"};
  std::vector<HostArray> buffers;   ///< in slot order
  HostArray expected;               ///< slot 0 after the launch
  std::vector<std::string> inputs;  ///< per output element, the inputs that produced it
  LaunchShape shape;
  Tolerance tolerance;
};

/// When PG_ERR_UNSUPPORTED counts as a failure for a dtype the device declares.
/// When a plugin must run a case rather than refuse it with PG_ERR_UNSUPPORTED.
/// unless_decomposed: required unless the device sets PG_CAP_DECOMPOSE_TRANSCENDENTAL
/// (then the host lowers the op before rendering, as plugin.h says).
enum class Required { always, never, with_local_memory, unless_decomposed };

struct OpCase;
using Applies = bool (*)(pg_dtype dtype, const pg_capabilities& caps);
/// Appends the kernels of case `c` for `dtype` to `out`.
using MakerFn = void(const OpCase& c, pg_dtype dtype, const pg_capabilities& caps,
                     std::vector<Kernel>& out);
using Maker = MakerFn*;

/// Which values feed an elementwise case.
enum class Inputs { arith, edge, division, shift, none };

struct OpCase {
  const char* name;         ///< "ADD", "LOAD.gated", "ADD.vec4"
  std::vector<pg_op> rows;  ///< op-table rows credited with the result
  pg_op op;                 ///< the ALU op of elementwise makers
  Applies applies;
  Required required;
  Maker make;
  Inputs inputs = Inputs::arith;
  double ulps = 1;  ///< float tolerance
};

/// The whole table.
const std::vector<OpCase>& op_cases();

// Shared pieces of the makers (op_inputs.cpp).

/// Sixteen values of dtype `dt` of the given kind; `which` picks a different permutation for
/// the second and third operand.
std::vector<Value> sample_values(pg_dtype dt, Inputs kind, int which);
/// A buffer of `count` elements filled with the 0x5a sentinel byte.
HostArray sentinel_array(pg_dtype dt, size_t count);
/// A C identifier naming a kernel: "pgc_ADD_vec4_float32".
std::string kernel_name(const char* case_name, pg_dtype dt, const std::string& suffix = "");
/// A kernel for case `c` with its output buffer (slot 0, `count` sentinel elements, also the
/// initial expected output) and a global size of (count, 1, 1). An empty `label` means
/// "<case name> <dtype>".
Kernel start_kernel(const OpCase& c, pg_dtype dt, pg_dtype out_dt, size_t count,
                    const std::string& label = "", const std::string& suffix = "");
/// A CONST instruction of dtype `dt` holding `v` (arg.i or arg.f by dtype).
sdk::ProgramBuilder::Ref const_value(sdk::ProgramBuilder& b, pg_dtype dt, Value v,
                                     uint8_t vcount = 1);

// The makers (op_cases.cpp, op_structural.cpp).
MakerFn make_elementwise, make_cast, make_bitcast, make_copy, make_gated_load, make_gated_store,
    make_const, make_param_scalar, make_special, make_range, make_if, make_local, make_vector_copy,
    make_vectorize, make_gep, make_vector_alu;

/// The vector widths the vector cases run at: every power of two from 2 up to the device's
/// max_vector_lanes, and max_vector_lanes itself (none when it is 1).
std::vector<uint32_t> vector_widths(const pg_capabilities& caps);

}  // namespace polygrad::conformance::detail

#endif  // POLYGRAD_CONFORMANCE_OP_CASES_HPP
