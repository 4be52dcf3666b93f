// The scheduler's state while it realises a set of roots (see schedule.hpp).
#ifndef POLYGRAD_SCHEDULE_SCHEDULER_HPP
#define POLYGRAD_SCHEDULE_SCHEDULER_HPP

#include "schedule/schedule.hpp"

#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace polygrad::codegen {
struct PanelPacking;
}  // namespace polygrad::codegen

namespace polygrad::schedule {

class KernelBuilder;

class Scheduler {
 public:
  /// `realise`: long values to realise wherever a kernel first meets them (those a first pass
  /// found computed inline by two or more kernels; see make_schedule).
  explicit Scheduler(const Context& ctx, std::unordered_set<const UOp*> realise = {})
      : ctx_(ctx), realise_(std::move(realise)) {}

  Schedule run(const std::vector<UOpRef>& roots);

  /// The realised view (RESHAPE(BUFFER, shape)) of `node`, scheduling its kernels first. Sets
  /// `item` to the index of the item that wrote it (none for inputs).
  UOpRef realize(const UOp* node, std::optional<size_t>& item, bool root);

  lazy::ShapeOf& shape() { return shape_; }
  /// Whether `node` already has a buffer in this schedule (then reading it beats recomputing).
  bool is_realized(const UOp* node) const { return done_.count(node) != 0; }
  /// How many nodes of the graphs being scheduled use `node` as a source.
  int64_t users(const UOp* node) const {
    auto it = users_.find(node);
    return it == users_.end() ? 0 : it->second;
  }
  /// Whether `node` should be realised rather than computed inline by a kernel: a long value
  /// a first pass saw computed by several kernels.
  bool realise_first(const UOp* node) const { return realise_.count(node) != 0; }
  /// Records the long values a kernel just built computed inline.
  void note_inlined(const std::unordered_set<const UOp*>& nodes) {
    for (const UOp* n : nodes) inlined_[n].insert(kernels_built_);
    ++kernels_built_;
  }
  /// The long values two or more kernels of this schedule computed inline.
  std::unordered_set<const UOp*> inlined_twice() const;
  /// Keeps a node made during scheduling alive until the schedule is done.
  void keep(const UOpRef& node) { keep_.push_back(node); }
  const Context& ctx() const { return ctx_; }

 private:
  struct Meta {
    std::set<size_t> deps;
    std::set<int64_t> old_reads;
    std::optional<int64_t> writes;  ///< buffer id an ASSIGN or copy writes (ids may be < 0)
    /// Buffers read as the result of an assign of this schedule (one write of a chain).
    std::set<int64_t> version_reads = {};
  };
  UOpRef realize_uncached(const UOp* node, std::optional<size_t>& item, bool root);
  /// A kernel storing `value` (of `shape`) into `out`, contiguously or, with `store_view`, at
  /// the elements of that view of out's realised tensor.
  size_t add_kernel(const UOp* value, const lazy::Shape& shape, const UOpRef& out,
                    const std::string& device, std::optional<int64_t> assign_target,
                    const UOp* store_view = nullptr);
  /// A user error naming the op unless `view` is movement ops that each element of the view
  /// maps to one element of `target`'s realised tensor through (no EXPAND, no PAD).
  void check_writable_view(const UOp* view, const UOp* target) const;
  size_t add_copy(const UOpRef& dst, const UOpRef& src, int64_t nbytes, const std::string& device,
                  std::set<size_t> deps, std::set<int64_t> old_reads);
  std::string device_of(const UOp* node);
  /// True when it compiled the outer variable `outer_var` in (as `outer_extent`). `batch`:
  /// the value of the launch variable a weight gradient reduces over (0: none), whose operands
  /// then go into panels that keep it a variable.
  bool pack_panels(UOpRef& ast, std::vector<UOpRef>& buffers, std::set<size_t>& deps,
                   const std::string& device, int64_t rows, const UOp* outer_var,
                   int64_t outer_extent, int64_t batch = 0);
  /// A new buffer of `count` elements holding `buf` (`nrows` rows of p.row) in p's panels,
  /// written by one or two kernels of this schedule (codegen::copy_in_row_blocks; added to
  /// `deps`) over the rows as a launch variable.
  UOpRef copy_to_panels(const UOpRef& buf, int64_t nrows, const codegen::PanelPacking& p,
                        int64_t count, const std::string& device, std::set<size_t>& deps);
  void order();
  /// A buffer of this schedule (ctx_.new_buffer), remembered as made here.
  UOpRef new_buffer(const std::string& device, DType dtype, int64_t count);
  /// Marks items `first`.. (the kernels of one copy into panels) as a packing of `source` when
  /// it is an input of the schedule rather than a buffer it makes.
  void mark_packing(size_t first, const UOpRef& source);

  const Context& ctx_;
  lazy::ShapeOf shape_;
  Schedule sched_;
  std::vector<Meta> meta_;
  std::unordered_map<const UOp*, std::pair<UOpRef, std::optional<size_t>>> done_;
  std::vector<UOpRef> keep_;
  std::set<int64_t> assign_targets_;  ///< buffers some ASSIGN of this schedule writes
  std::unordered_map<const UOp*, int64_t> users_;
  std::unordered_set<const UOp*> realise_;
  std::unordered_map<const UOp*, std::set<int>> inlined_;  ///< the kernels (serials) per value
  int kernels_built_ = 0;
  std::unordered_set<const UOp*> made_;  ///< buffers this schedule creates
};

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_SCHEDULER_HPP
