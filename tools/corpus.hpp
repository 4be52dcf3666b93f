// The host corpus of `polygrad conformance`: graphs built with the Tensor API (elementwise,
// broadcasts, reductions, softmax, matmul, conv, gather, on every dtype), realised on the
// plugin's device through the host's own codegen and on the cpu device, and compared. Where
// the kit checks each op of the kernel program on its own, the corpus checks the programs the
// host actually hands the plugin for its declared capabilities (vector widths, loops, gates),
// as ggml's test-backend-ops compares every backend with the CPU one.
#ifndef POLYGRAD_TOOLS_CORPUS_HPP
#define POLYGRAD_TOOLS_CORPUS_HPP

#include <polygrad/conformance.hpp>
#include <polygrad/tensor.hpp>

#include <string>
#include <vector>

namespace polygrad::cli {

/// Inputs of one corpus case on one device: tensors whose values depend only on the slot and
/// the element index, so the plugin's device and the reference see the same data.
class CaseInputs {
 public:
  CaseInputs(std::string device, pg_dtype dtype) : device_(std::move(device)), dtype_(dtype) {}

  pg_dtype dtype() const { return dtype_; }
  const std::string& device() const { return device_; }
  /// A tensor of `shape` in the case's dtype: small signed values (ints -8..8, floats -2..2;
  /// unsigned ints 0..16; bools alternating), different for each call.
  Tensor values(const Tensor::Shape& shape) { return make(shape, dtype_, false); }
  /// Positive values (floats 0.1..4.1, ints 1..16), for log, sqrt and divisors.
  Tensor positive(const Tensor::Shape& shape) { return make(shape, dtype_, true); }
  /// Values of another dtype (a bool condition, say).
  Tensor values_of(const Tensor::Shape& shape, pg_dtype dtype) { return make(shape, dtype, false); }
  /// Indices in [0, bound) of `dtype` (int32 or int64).
  Tensor indices(const Tensor::Shape& shape, int64_t bound, pg_dtype dtype = PG_DTYPE_INT32);

 private:
  Tensor make(const Tensor::Shape& shape, pg_dtype dtype, bool positive);

  std::string device_;
  pg_dtype dtype_;
  int slot_ = 0;
};

/// One case: a graph over CaseInputs, the dtypes it runs for, and its tolerance for floats in
/// units of the result dtype's epsilon, relative to max(1, |reference|). Ints and bools match
/// exactly.
struct CorpusCase {
  const char* name;
  std::vector<pg_dtype> dtypes;
  Tensor (*build)(CaseInputs& in);
  double epsilons = 4;
};

/// The table (corpus_cases.cpp).
const std::vector<CorpusCase>& corpus_cases();

/// Runs every case on `device` (e.g. "template:0") for each dtype it declares, compares with
/// `reference` ("cpu:0"). A case the device cannot run because it lacks a capability (the
/// host's "device ... lacks int64" error) is unsupported, not failed; any other error fails.
conformance::SuiteResult run_corpus(const std::string& device, const std::string& reference);

}  // namespace polygrad::cli

#endif  // POLYGRAD_TOOLS_CORPUS_HPP
