// Builds one kernel's AST by indexing the tensor-level graph (see schedule.hpp).
#ifndef POLYGRAD_SCHEDULE_KERNEL_BUILDER_HPP
#define POLYGRAD_SCHEDULE_KERNEL_BUILDER_HPP

#include "schedule/schedule.hpp"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace polygrad::schedule {

class Scheduler;

/// The state of one kernel under construction.
class KernelBuilder {
 public:
  KernelBuilder(Scheduler& owner, std::string device) : owner_(owner), device_(std::move(device)) {}

  /// The AST that stores `node`'s value (shape `shape`) into `out` (a BUFFER, slot 0).
  UOpRef build(const UOp* node, const lazy::Shape& shape, const UOpRef& out);

  /// Build with the outermost output extent (of an axis > 1) as a DEFINE_VAR, outer_var(),
  /// whose value is outer_extent(), so one compiled kernel serves every size of that axis.
  void set_symbolic_outer(bool on) { symbolic_outer_ = on; }
  /// Store at the elements of `view` (movement ops over the output buffer's realised tensor,
  /// of the built value's shape) instead of contiguously; null: contiguously.
  void set_store_view(const UOp* view) { store_view_ = view; }
  /// The outer output RANGE over outer_var() after build(), or null when none was made.
  const UOp* outer_range() const { return outer_range_.get(); }
  /// The DEFINE_VAR of the outer extent after build(), or null when none was made.
  const UOp* outer_var() const { return outer_range_ ? outer_range_->src(0).get() : nullptr; }
  int64_t outer_extent() const { return outer_extent_; }
  /// The number of output ranges (axes of extent > 1) after build().
  size_t output_ranges() const { return out_ranges_.size(); }

  /// BUFFER per slot, in slot order.
  const std::vector<UOpRef>& buffers() const { return buffers_; }
  /// Items of the schedule this kernel reads the results of.
  const std::set<size_t>& deps() const { return deps_; }
  /// Buffer ids read directly from the graph (their contents before this schedule).
  const std::set<int64_t>& old_reads() const { return old_reads_; }
  /// Buffers read as what an assign of the schedule wrote into them.
  const std::set<int64_t>& version_reads() const { return version_reads_; }

 private:
  UOpRef index(const UOp* node, const std::vector<UOpRef>& idx, const UOpRef& gate);
  UOpRef index_uncached(const UOp* node, const std::vector<UOpRef>& idx, const UOpRef& gate);
  UOpRef load(const UOpRef& buffer, const lazy::Shape& shape, const std::vector<UOpRef>& idx,
              const UOpRef& gate);
  UOpRef load_realized(const UOp* node, const std::vector<UOpRef>& idx, const UOpRef& gate);
  /// load_realized, with `node` realised in the order this kernel's output ranges walk its
  /// axes (a permuted copy) when `idx` is a permutation of output ranges.
  UOpRef load_realized_in_walk_order(const UOp* node, const std::vector<UOpRef>& idx,
                                     const UOpRef& gate);
  UOpRef reduce(const UOp* node, const std::vector<UOpRef>& idx, const UOpRef& gate);
  UOpRef split_reduce(const UOp* node);
  void split_ranges(UOpRef& value, std::vector<UOpRef>& srcs);
  size_t nest_prefix(const std::set<const UOp*>& deps) const;
  bool hoistable(const std::set<const UOp*>& deps) const;
  bool can_fuse_reduce(const std::set<const UOp*>& deps, const UOp* node);
  bool recomputed(const UOp* node, const std::vector<UOpRef>& idx);
  bool transposed_operand(const UOp* view, const std::vector<UOpRef>& idx) const;
  bool costly(const UOp* node);
  bool beside_transcendentals(const UOp* node);
  int64_t terms(const UOp* node);
  int64_t terms_per_element(const UOp* node);
  int64_t count_in(const UOp* node, bool (*counts)(const UOp*), int64_t cap, bool leaves = false);
  int64_t ops(const UOp* node);
  int64_t gathers(const UOp* node);
  int64_t reads(const UOp* node);
  /// Buffers read that make a value worth writing once rather than recomputing in a reduce's
  /// inner loop for every element of a range it does not use (see recomputed()).
  static constexpr int64_t kRecomputedReads = 3;
  /// Padded pieces that make a value worth writing once rather than gathering again.
  static constexpr int64_t kGathers = 4;
  /// More ops than this make a value costly to recompute (see costly()).
  static constexpr int64_t kCostlyOps = 16;
  bool inlined_leaf(const UOp* node) const;
  void count_paths(const UOp* root);
  bool keeps_index(const UOp* view);
  UOpRef global(const UOpRef& buffer);
  UOpRef new_range(int64_t extent);
  /// `sink` with the output ranges before the last merged into one (a (batch, seq, d) output
  /// as (batch * seq) rows of d; with `all`, for an output whose last axis is 1, every range:
  /// a keepdim row reduction), when every index then walks those rows without division or
  /// remainder; else `sink` unchanged. Then the inner ranges after the first likewise, the
  /// most of them that merge (a weight gradient's (cin, kh, kw) as cin*kh*kw columns).
  UOpRef merge_leading_ranges(const UOpRef& sink, bool all);
  /// The output buffer's offset of the element at `idx` of store_view_.
  UOpRef store_offset(std::vector<UOpRef> idx);
  /// `sink` with out_ranges_[first, end) merged into one range when no index then divides or
  /// takes a remainder of it; else `sink` unchanged.
  UOpRef merge_ranges(const UOpRef& sink, size_t first, size_t end);

  Scheduler& owner_;
  std::string device_;
  const UOp* root_ = nullptr;
  std::vector<UOpRef> buffers_;
  std::unordered_map<const UOp*, size_t> slots_;
  std::vector<UOpRef> out_ranges_;
  /// The loop nest around the value being built, outermost first: the output ranges, and in a
  /// fused reduce the prefix of the nest its index depends on (where the codegen hoists it),
  /// then its own ranges.
  std::vector<UOpRef> nest_;
  std::unordered_map<const UOp*, bool> costly_;
  /// The long values (more than kCostlyOps) this kernel computes inline.
  std::unordered_set<const UOp*> inlined_;
  std::unordered_map<const UOp*, int64_t> ops_;
  std::unordered_map<const UOp*, int64_t> gathers_;
  std::unordered_map<const UOp*, int64_t> reads_;
  /// For each node of the kernel's inlined graph, how many paths lead to it from the root (how
  /// many times it is evaluated, up to the memo of equal indices), capped.
  std::unordered_map<const UOp*, int64_t> paths_;
  /// Reduces being built around the current node.
  int reduce_depth_ = 0;
  /// The multiply-adds (input elements) of the innermost reduce being built when it sums a
  /// product (a contraction's operands), else 0.
  int64_t product_macs_ = 0;
  /// Multiply-adds from which a contraction's arithmetic operands are realised (see
  /// recomputed()).
  static constexpr int64_t kRealisedOperandMacs = int64_t{1} << 22;
  /// A product summing this many terms per element beside transcendental functions is realised
  /// (see reduce()).
  static constexpr int64_t kLongProduct = 128;
  /// How many different indexings of each node the kernel needs (see count_paths).
  std::unordered_map<const UOp*, int64_t> views_;
  int64_t next_range_ = 0;
  bool symbolic_outer_ = false;
  const UOp* store_view_ = nullptr;
  UOpRef outer_range_;
  int64_t outer_extent_ = 0;
  std::set<size_t> deps_;
  std::set<int64_t> old_reads_;
  std::set<int64_t> version_reads_;
  std::map<std::vector<const UOp*>, UOpRef> memo_;
  std::vector<UOpRef> keep_;  ///< the nodes memo_'s keys point to
};

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_KERNEL_BUILDER_HPP
