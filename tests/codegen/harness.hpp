// Helpers of the codegen tests: AST building shorthands and running a lowered kernel on the
// cpu device with host vectors in and out.
#ifndef POLYGRAD_TESTS_CODEGEN_HARNESS_HPP
#define POLYGRAD_TESTS_CODEGEN_HARNESS_HPP

#include <polygrad/device.hpp>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/lower.hpp"
#include "ir/uop.hpp"

namespace polygrad_test {

using polygrad::DType;
using polygrad::Op;
using polygrad::UOp;
using polygrad::UOpRef;
namespace dtypes = polygrad::dtypes;

/// The cpu device (the build tree's cpu_clang plugin).
polygrad::Device& cpu();
/// The cpu device's target.
polygrad::codegen::Target cpu_target();
/// The float32 lanes `target`'s capabilities declare: its vector width over 4 bytes, at most
/// max_vector_lanes. Tests derive from it whether a plan of float vectors must exist.
int64_t f32_lanes(const polygrad::codegen::Target& target);

/// DEFINE_GLOBAL slot `slot` of element type `t`.
UOpRef global(int64_t slot, DType t);
/// An int64 constant.
UOpRef idx(int64_t v);
/// LOAD(INDEX(buf, offset)).
UOpRef load(const UOpRef& buf, const UOpRef& offset);
/// STORE(INDEX(buf, offset), value).
UOpRef store(const UOpRef& buf, const UOpRef& offset, const UOpRef& value);
/// SINK of the stores.
UOpRef sink(std::initializer_list<UOpRef> stores);
/// REDUCE of `op` over `ranges`.
UOpRef reduce(Op op, const UOpRef& value, std::initializer_list<UOpRef> ranges);

/// Host data for one buffer slot: bytes and element count.
struct HostBuf {
  std::vector<unsigned char> bytes;
  template <typename T>
  static HostBuf of(const std::vector<T>& v) {
    HostBuf b;
    b.bytes.resize(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
    return b;
  }
  template <typename T>
  static HostBuf zeros(size_t n) {
    return of(std::vector<T>(n));
  }
  template <typename T>
  std::vector<T> as() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

/// A lowered kernel loaded on the cpu.
struct Compiled {
  polygrad::codegen::LoweredKernel kernel;
  polygrad::Program program;
  std::string source;
};

/// Lower `ast` for `target` (default: the cpu's), render and load it.
Compiled compile(const UOpRef& ast);
Compiled compile(const UOpRef& ast, const polygrad::codegen::Target& target);

/// Launch `k` with `bufs` (copied in and, after the run, copied back) and variable values.
void run(const Compiled& k, std::vector<HostBuf>& bufs,
         const std::unordered_map<std::string, int64_t>& vars = {});

/// `count` small integers (-4..4) from `seed`: every product and partial sum of a test-sized
/// matmul is exact in float, so any summation order agrees with a plain loop.
std::vector<float> exact_ints(int64_t count, int64_t seed);

/// softmax over the rows of an n x m float32 matrix as the scheduler writes it:
/// max_i = max_k x[i,k]; sum_i = sum_k exp2((x[i,k] - max_i) * log2e);
/// out[i,j] = exp2((x[i,j] - max_i) * log2e) / sum_i (out slot 0, x slot 1).
UOpRef softmax_ast(int64_t n, int64_t m);
/// The same softmax in double.
std::vector<double> softmax_ref(const std::vector<float>& x, int64_t n, int64_t m);

/// Lower, compile and run in one go.
void lower_and_run(const UOpRef& ast, std::vector<HostBuf>& bufs);

/// out[r] = a[r] * b[r] + c[r] over `n` float32 elements (slots 0..3); `in_place`: out is c.
UOpRef mul_add_ast(int64_t n, bool in_place = false);
/// Runs mul_add_ast(n) on small exact values (no rounding anywhere) and checks every element.
void check_mul_add(int64_t n);

}  // namespace polygrad_test

#endif  // POLYGRAD_TESTS_CODEGEN_HARNESS_HPP
