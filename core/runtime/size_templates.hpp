// Kernels that differ only in a size share one compiled kernel that takes the size at launch.
//
// The scheduler makes a kernel's outermost extent a launch variable by itself (the batch), but a
// size that stays a stride or an inner extent (a sequence length in attention's seq x seq
// scores, in the softmax over them, in the weighted sum over values) is compiled in. When a
// kernel matches an earlier one in everything but its integer constants, and each constant that
// differs is a * t + b or a * t * t of one size t (t being 8 in one kernel and 9 in the other),
// the kernel is compiled once more with t as the launch variable `s0`. Every later kernel of that
// structure whose constants are those of some value of t runs that kernel with s0 = t: one
// compiled kernel serves every sequence length, as torch.compile's automatic dynamic shapes do
// after a size changes once. The generalised kernel computes exactly what the kernel with the
// constants would, since its constants are the template's at s0 = t.
//
// The first size of a structure is compiled in (constant extents vectorise and tile better), and
// so is any kernel over more than kMaxIterations loop iterations, where a compile pays for itself.
// The caller's `worthwhile` can refuse a general kernel for a whole structure (the program cache
// refuses one that loses loops, vector lanes or launch steps of the kernel it was learnt from).
#ifndef POLYGRAD_RUNTIME_SIZE_TEMPLATES_HPP
#define POLYGRAD_RUNTIME_SIZE_TEMPLATES_HPP

#include "ir/uop.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace polygrad::runtime {

/// A kernel that serves `ast` with its size variable bound.
struct SizeMatch {
  UOpRef general;   ///< the kernel AST with the size as a DEFINE_VAR
  std::string var;  ///< the variable's name
  int64_t value;    ///< its value for this kernel
};

/// The loop iterations of `ast` (the product of its ranges' extents, with `vars` bound), to
/// leave large kernels compiled for their sizes; saturates at INT64_MAX.
int64_t loop_iterations(const UOpRef& ast,
                        const std::vector<std::pair<std::string, int64_t>>& vars);

/// The generalised kernels learnt so far, by kernel structure. Not thread-safe: the program
/// cache calls it under its lock.
class SizeTemplates {
 public:
  static constexpr int64_t kMaxIterations = int64_t{1} << 22;
  /// The name of the size variable.
  static constexpr const char* kVar = "s0";

  SizeTemplates();
  ~SizeTemplates();
  SizeTemplates(const SizeTemplates&) = delete;
  SizeTemplates& operator=(const SizeTemplates&) = delete;

  /// The generalised kernel that serves `ast` (a kernel no compiled program has): one learnt
  /// before, or one learnt now from `ast` and an earlier kernel of its structure. Nothing when
  /// `ast` is the first of its structure or its constants are no function of one size; `ast` is
  /// then kept to pair with a later kernel.
  /// `worthwhile(sample, general, size)` decides whether a newly learnt general kernel (at the
  /// sample's size) replaces the sample's sizes (false: kernels of this structure keep being
  /// compiled for their sizes).
  std::optional<SizeMatch> lookup(
      const UOpRef& ast,
      const std::function<bool(const UOpRef& sample, const UOpRef& general, int64_t size)>&
          worthwhile);

  /// Gives up on the general kernel `general` (it failed to compile): the kernels it would
  /// serve are compiled for their sizes.
  void forget(const UOpRef& general);

 private:
  static constexpr size_t kMaxSamplesPerKernel = 4, kMaxTemplatesPerKernel = 4;
  static constexpr size_t kMaxSamples = 4096;
  struct Sample;
  struct Template;
  size_t sample_count_ = 0;
  std::unordered_map<size_t, std::vector<std::shared_ptr<Sample>>> samples_;
  std::unordered_map<size_t, std::vector<Template>> templates_;
};

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_SIZE_TEMPLATES_HPP
