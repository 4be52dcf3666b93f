// The race detector of local memory. Every element of a group's local memory has a shadow
// cell that records which threads wrote, read and atomically updated it in the current
// barrier interval (an epoch: a number that changes at the group's start and at every
// barrier). Two accesses of one element by different threads in one interval are a race
// unless both are reads or both are atomic updates: nothing orders them on a GPU, so a kernel
// that lacks a barrier is reported even where the emulator's own order would give the right
// answer.
#ifndef POLYGRAD_GPU_EMU_RACE_HPP
#define POLYGRAD_GPU_EMU_RACE_HPP

#include <cstdint>

namespace polygrad::gpu_emu {

enum class Access : uint8_t { read, write, atomic };

/// A local-memory element's accesses in the last epoch that touched it. Thread ids are flat
/// local ids; two of each kind are kept, since any third thread differs from one of them.
struct ShadowCell {
  static constexpr uint16_t kNone = 0xffff;
  uint32_t write_epoch = 0, read_epoch = 0, atomic_epoch = 0;
  uint16_t writer = kNone;
  uint16_t readers[2] = {kNone, kNone};
  uint16_t updaters[2] = {kNone, kNone};
};

/// A conflicting earlier access: the other thread and what it did ("wrote", "read", ...).
struct Conflict {
  uint32_t thread = ShadowCell::kNone;
  const char* did = nullptr;
  explicit operator bool() const { return did != nullptr; }
};

namespace detail {
/// One of `two` that is not `t`, or kNone.
inline uint16_t other(const uint16_t (&two)[2], uint16_t t) {
  if (two[0] != t) return two[0];
  return two[1] != t ? two[1] : ShadowCell::kNone;
}
inline void remember(uint16_t (&two)[2], uint32_t& epoch, uint32_t now, uint16_t t) {
  if (epoch != now) {
    epoch = now;
    two[0] = t;
    two[1] = ShadowCell::kNone;
  } else if (two[0] != t && two[1] == ShadowCell::kNone) {
    two[1] = t;
  }
}
}  // namespace detail

/// Records `access` of the element by thread `t` in epoch `now`; returns the earlier access of
/// another thread in the same epoch that it races with, if any.
[[gnu::always_inline]] inline Conflict record(ShadowCell& c, Access access, uint16_t t,
                                              uint32_t now) {
  if (c.write_epoch == now && c.writer != t) return {c.writer, "wrote"};
  if (access != Access::atomic && c.atomic_epoch == now) {
    const uint16_t o = detail::other(c.updaters, t);
    if (o != ShadowCell::kNone) return {o, "updated atomically"};
  }
  if (access != Access::read && c.read_epoch == now) {
    const uint16_t o = detail::other(c.readers, t);
    if (o != ShadowCell::kNone) return {o, "read"};
  }
  switch (access) {
    case Access::read:
      detail::remember(c.readers, c.read_epoch, now, t);
      break;
    case Access::write:
      c.write_epoch = now;
      c.writer = t;
      break;
    case Access::atomic:
      detail::remember(c.updaters, c.atomic_epoch, now, t);
      break;
  }
  return {};
}

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_RACE_HPP
