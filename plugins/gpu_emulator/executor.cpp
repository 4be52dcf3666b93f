#include "executor.hpp"

#include <polygrad/plugin.hpp>

#include <algorithm>
#include <cstring>

namespace polygrad::gpu_emu {

namespace {

// Batch sizes, each with its reason.
/// Threads of small groups batched together: enough that an instruction's loop over them
/// hides its dispatch, few enough that a loop body's register rows stay in L2.
constexpr uint32_t kBatchThreads = 128;
/// Bytes of local memory and race-detector shadow a batch's groups may take.
constexpr uint64_t kLocalBudget = uint64_t{32} << 20;
/// Bytes of register arrays a batch's threads may take.
constexpr uint64_t kRegBudget = uint64_t{64} << 20;

uint64_t align16(uint64_t v) {
  return (v + 15) & ~uint64_t{15};
}

}  // namespace

BatchPlan::BatchPlan(const Program& p, const uint32_t global[3], const uint32_t local[3]) {
  for (int d = 0; d < 3; ++d) {
    local_size[d] = local[d];
    global_size[d] = global[d];
  }
  group_threads = local[0] * local[1] * local[2];
  groups = uint64_t{global[0]} * global[1] * global[2];
  uint64_t per_batch = group_threads >= kBatchThreads ? 1 : kBatchThreads / group_threads;
  const uint64_t local_bytes = align16(p.local_bytes) + p.local_elements * sizeof(ShadowCell);
  if (local_bytes > 0)
    per_batch = std::min(per_batch, std::max<uint64_t>(1, kLocalBudget / local_bytes));
  const uint64_t reg_bytes = align16(p.reg_bytes) * group_threads;
  if (reg_bytes > 0) per_batch = std::min(per_batch, std::max<uint64_t>(1, kRegBudget / reg_bytes));
  per_batch = std::min(per_batch, std::max<uint64_t>(1, groups));
  groups_per_batch = static_cast<uint32_t>(per_batch);
  batches = (groups + per_batch - 1) / per_batch;
  const uint32_t width = groups_per_batch * group_threads;
  group_of.resize(width);
  thread_of.resize(width);
  for (auto& ids : local_id) ids.resize(width);
  for (uint32_t t = 0; t < width; ++t) {
    const uint32_t flat = t % group_threads;
    group_of[t] = static_cast<uint16_t>(t / group_threads);
    thread_of[t] = static_cast<uint16_t>(flat);
    local_id[0][t] = static_cast<uint16_t>(flat % local[0]);
    local_id[1][t] = static_cast<uint16_t>(flat / local[0] % local[1]);
    local_id[2][t] = static_cast<uint16_t>(flat / (local[0] * local[1]));
  }
}

std::string Batch::group_name(uint32_t g) const {
  const uint64_t linear = first_group + g, gx = global_size[0], gy = global_size[1];
  return "group (" + std::to_string(linear % gx) + "," + std::to_string((linear / gx) % gy) + "," +
         std::to_string(linear / (gx * gy)) + ")";
}

std::string Batch::thread_name(uint32_t t) const {
  return group_name(group_of[t]) + " thread " + std::to_string(thread_of[t]);
}

void Batch::fault(const Instr& in, const std::string& what) const {
  sdk::fail(PG_ERR_LAUNCH, "gpu_emu: " + program->where(in.origin) + ": " + what);
}

void Workspace::reserve(const Program& p, const BatchPlan& plan) {
  const size_t width = plan.group_of.size(), groups = plan.groups_per_batch;
  auto grow = [](auto& v, size_t n) {
    if (v.size() < n) v.resize(n);
  };
  grow(regs_, static_cast<size_t>(p.rows) * width);
  grow(levels_, p.depth + 2);
  grow(level_idx_, (p.depth + 2) * width);
  grow(local_, groups * align16(p.local_bytes));
  grow(shadow_, groups * p.local_elements);
  grow(reg_arrays_, width * align16(p.reg_bytes));
  grow(epochs_, groups);
  grow(counts_, std::max(groups, width));
  for (auto& ids : group_id_) grow(ids, groups);
}

uint32_t Workspace::next_epoch() {
  if (epoch_ == 0xffffffffu) {  // wrapped: forget every recorded access
    std::fill(shadow_.begin(), shadow_.end(), ShadowCell{});
    epoch_ = 0;
  }
  return ++epoch_;
}

void Workspace::run(const Program& p, const BatchPlan& plan, uint64_t index) {
  reserve(p, plan);
  const uint64_t first = index * plan.groups_per_batch;
  const uint32_t groups =
      static_cast<uint32_t>(std::min<uint64_t>(plan.groups_per_batch, plan.groups - first));
  const uint32_t width = groups * plan.group_threads;
  Batch b;
  b.program = &p;
  b.width = width;
  b.regs = regs_.data();
  b.levels = levels_.data();
  b.buffers = plan.buffers;
  b.scalars = plan.scalars;
  for (int d = 0; d < 3; ++d) {
    b.local_size[d] = plan.local_size[d];
    b.global_size[d] = plan.global_size[d];
  }
  b.group_threads = plan.group_threads;
  b.first_group = first;
  b.group_of = plan.group_of.data();
  b.thread_of = plan.thread_of.data();
  for (int d = 0; d < 3; ++d) {
    b.local_id[d] = plan.local_id[d].data();
    b.group_id[d] = group_id_[d].data();
  }
  for (uint32_t g = 0; g < groups; ++g) {
    const uint64_t linear = first + g, gx = plan.global_size[0], gy = plan.global_size[1];
    group_id_[0][g] = static_cast<uint32_t>(linear % gx);
    group_id_[1][g] = static_cast<uint32_t>(linear / gx % gy);
    group_id_[2][g] = static_cast<uint32_t>(linear / (gx * gy));
  }
  b.local = local_.data();
  b.local_stride = align16(p.local_bytes);
  b.reg_arrays = reg_arrays_.data();
  b.reg_stride = align16(p.reg_bytes);
  b.shadow = shadow_.data();
  b.epochs = epochs_.data();
  b.atomic_global = plan.atomic_global;
  b.check_alignment = plan.check_alignment;
  for (uint32_t g = 0; g < groups; ++g) epochs_[g] = next_epoch();
  // Memory a kernel must write before it reads starts as 0xff bytes (NaN for floats), so a
  // missing write shows in its results.
  if (p.local_bytes > 0) std::memset(local_.data(), 0xff, groups * b.local_stride);
  if (p.reg_bytes > 0) std::memset(reg_arrays_.data(), 0xff, width * b.reg_stride);
  for (uint32_t d = 0; d < p.depth + 2; ++d) levels_[d].idx = level_idx_.data() + d * width;
  levels_[0].n = width;
  levels_[0].full = true;
  for (const Instr& in : p.prologue) in.handler(in, b);
  execute(p, b);
}

void Workspace::execute(const Program& p, Batch& b) {
  const Instr* code = p.code.data();
  const uint32_t n = static_cast<uint32_t>(p.code.size());
  for (uint32_t pc = 0; pc < n;) {
    const Instr& in = code[pc];
    switch (in.flow) {
      case Flow::run:
        in.handler(in, b);
        ++pc;
        break;
      case Flow::range:
      case Flow::if_:
        pc = enter(in, b, in.flow == Flow::range) ? pc + 1 : in.jump;
        break;
      case Flow::end_range:
        pc = next_iteration(in, b) ? in.jump + 1 : pc + 1;
        break;
      case Flow::end_if:
        ++pc;
        break;
      case Flow::barrier:
        barrier(in, b);
        ++pc;
        break;
      case Flow::wmma:
        run_wmma(in, b, counts_);
        ++pc;
        break;
    }
  }
}

bool Workspace::enter(const Instr& in, Batch& b, bool range) {
  const Active& outer = b.levels[in.depth];
  Active& inner = b.levels[in.depth + 1];
  const Slot* v = b.row(in.src[0]);
  uint16_t* idx = inner.idx;
  uint32_t k = 0;
  if (range) {  // a thread enters when its bound is positive; its counter starts at 0
    Slot* counter = b.row(in.dst);
    for_each_thread(outer, [&](uint32_t t) {
      counter[t].i = 0;
      if (v[t].i > 0) idx[k++] = static_cast<uint16_t>(t);
    });
  } else {
    for_each_thread(outer, [&](uint32_t t) {
      if (v[t].i != 0) idx[k++] = static_cast<uint16_t>(t);
    });
  }
  inner.full = outer.full && k == outer.n;
  inner.n = k;
  return k > 0;
}

bool Workspace::next_iteration(const Instr& in, Batch& b) {
  Active& body = b.levels[in.depth];
  Slot* counter = b.row(in.dst);
  const Slot* bound = b.row(in.src[0]);
  uint16_t* idx = body.idx;
  const uint32_t n = body.n;
  uint32_t k = 0;
  // Threads whose loop is over wait (inactive) until every thread's is.
  if (body.full) {
    for (uint32_t t = 0; t < n; ++t)
      if (++counter[t].i < bound[t].i) idx[k++] = static_cast<uint16_t>(t);
  } else {
    for (uint32_t j = 0; j < n; ++j) {
      const uint32_t t = idx[j];
      if (++counter[t].i < bound[t].i) idx[k++] = static_cast<uint16_t>(t);
    }
  }
  body.full = body.full && k == n;
  body.n = k;
  return k > 0;
}

void Workspace::barrier(const Instr& in, Batch& b) {
  const Active& active = b.active(in);
  const uint32_t per_group = b.group_threads, groups = b.width / per_group;
  if (active.full) {
    for (uint32_t g = 0; g < groups; ++g) epochs_[g] = next_epoch();
    return;
  }
  std::fill(counts_.begin(), counts_.begin() + groups, 0u);
  for_each_thread(active, [&](uint32_t t) { ++counts_[b.group_of[t]]; });
  for (uint32_t g = 0; g < groups; ++g) {
    if (counts_[g] == per_group) {
      epochs_[g] = next_epoch();
    } else if (counts_[g] != 0) {
      // Name one thread of the group that reached it and one that did not.
      std::vector<bool> here(per_group, false);
      for_each_thread(active, [&](uint32_t t) {
        if (b.group_of[t] == g) here[b.thread_of[t]] = true;
      });
      const auto missing = std::find(here.begin(), here.end(), false) - here.begin();
      const auto present = std::find(here.begin(), here.end(), true) - here.begin();
      b.fault(in, "divergent barrier in " + b.group_name(g) + ": thread " +
                      std::to_string(present) + " reached it and thread " +
                      std::to_string(missing) +
                      " did not (every thread of a group must reach a BARRIER, or none)");
    }
  }
}

}  // namespace polygrad::gpu_emu
