// LOAD, STORE and ATOMIC_ADD. Every access is checked: its elements must lie inside the array
// (a buffer, a group's local array, a thread's register array), a vector access to global or
// local memory must be aligned to its size as on a GPU (up to 16 bytes), and every access to
// local memory goes through the race detector.
#include <polygrad/plugin.hpp>

#include <atomic>
#include <bit>
#include <string>

#include "batch.hpp"
#include "handlers.hpp"
#include "target.hpp"

namespace polygrad::gpu_emu {

namespace {

const char* space_name(pg_addrspace space) {
  return space == PG_ADDR_GLOBAL  ? "buffer"
         : space == PG_ADDR_LOCAL ? "local array"
                                  : "register array";
}

/// "buffer 0" or "local array %3" (the defining instruction).
std::string array_name(const Array& a) {
  return std::string(space_name(a.space)) + " " +
         (a.space == PG_ADDR_GLOBAL ? std::to_string(a.offset) : "%" + std::to_string(a.origin));
}

[[gnu::cold, gnu::noinline]] void out_of_bounds(const Batch& b, const Instr& in, const Array& a,
                                                uint32_t t, int64_t index, uint32_t lanes,
                                                int64_t count) {
  b.fault(in, b.thread_name(t) + " accesses elements " + std::to_string(index) + ".." +
                  std::to_string(index + lanes - 1) + " of " + array_name(a) + ", which has " +
                  std::to_string(count));
}

[[gnu::cold, gnu::noinline]] void misaligned(const Batch& b, const Instr& in, const Array& a,
                                             uint32_t t, int64_t index, uint64_t bytes,
                                             uint64_t align) {
  b.fault(in, b.thread_name(t) + " makes a " + std::to_string(bytes) +
                  "-byte vector access at element " + std::to_string(index) + " of " +
                  array_name(a) + ", not aligned to " + std::to_string(align) +
                  " bytes (the device declares PG_CAP_ALIGNED_VECTORS)");
}

/// Where an instruction's array lies for each thread of the batch: one buffer for all, a
/// group's local array, a thread's register array.
template <pg_dtype DT, pg_addrspace SPACE>
struct Region {
  static constexpr int64_t size = Type<DT>::size;
  unsigned char* base;
  int64_t count;
  uint64_t stride = 0;
  const uint16_t* group_of = nullptr;

  Region(const Batch& b, const Array& a) {
    if constexpr (SPACE == PG_ADDR_GLOBAL) {
      const GlobalBuffer& g = b.buffers[a.offset];
      base = g.data;
      count = static_cast<int64_t>(g.bytes / size);
    } else if constexpr (SPACE == PG_ADDR_LOCAL) {
      base = b.local + a.offset;
      count = a.count;
      stride = b.local_stride;
      group_of = b.group_of;
    } else {
      base = b.reg_arrays + a.offset;
      count = a.count;
      stride = b.reg_stride;
    }
  }

  /// The bytes of elements [index, index + lanes) for batch thread t, after the bounds check
  /// and, for a vector in global or local memory, the alignment check.
  [[gnu::always_inline]] unsigned char* at(const Batch& b, const Instr& in, const Array& a,
                                           uint32_t t, int64_t index, uint32_t lanes) const {
    if (index < 0 || index > count - static_cast<int64_t>(lanes)) [[unlikely]]
      out_of_bounds(b, in, a, t, index, lanes, count);
    if constexpr (SPACE != PG_ADDR_REG) {
      if (lanes > 1 && b.check_alignment) {
        const uint64_t align = std::min<uint64_t>(16, std::bit_floor(uint64_t{lanes} * size));
        if (static_cast<uint64_t>(index * size) & (align - 1)) [[unlikely]]
          misaligned(b, in, a, t, index, lanes * size, align);
      }
    }
    unsigned char* p = base + index * size;
    if constexpr (SPACE == PG_ADDR_LOCAL) p += group_of[t] * stride;
    if constexpr (SPACE == PG_ADDR_REG) p += t * stride;
    return p;
  }
};

[[gnu::cold, gnu::noinline]] void race(const Batch& b, const Instr& in, const Array& a, uint32_t g,
                                       uint16_t me, int64_t element, Access access,
                                       const Conflict& c) {
  const char* doing = access == Access::read    ? "reads"
                      : access == Access::write ? "writes"
                                                : "atomically updates";
  b.fault(in, "race on local memory in " + b.group_name(g) + ": thread " + std::to_string(me) +
                  " " + doing + " element " + std::to_string(element) + " of " + array_name(a) +
                  " that thread " + std::to_string(c.thread) + " " + c.did +
                  " since the last barrier");
}

/// The race detector's view of one instruction's local array.
struct RaceCheck {
  ShadowCell* cells;  ///< group 0's shadow of the array
  size_t group_stride;
  const uint16_t* group_of;
  const uint16_t* thread_of;
  const uint32_t* epochs;

  RaceCheck(const Batch& b, const Array& a)
      : cells(b.shadow + a.shadow),
        group_stride(b.program->local_elements),
        group_of(b.group_of),
        thread_of(b.thread_of),
        epochs(b.epochs) {}

  /// Records an access of elements [index, index + lanes) by batch thread t; a conflict is a
  /// fault.
  [[gnu::always_inline]] void operator()(const Batch& b, const Instr& in, const Array& a,
                                         uint32_t t, int64_t index, uint32_t lanes,
                                         Access access) const {
    const uint32_t g = group_of[t];
    ShadowCell* cell = cells + g * group_stride + index;
    const uint16_t me = thread_of[t];
    const uint32_t now = epochs[g];
    for (uint32_t l = 0; l < lanes; ++l) {
      const Conflict c = record(cell[l], access, me, now);
      if (c) [[unlikely]]
        race(b, in, a, g, me, index + l, access, c);
    }
  }
};

template <pg_dtype DT, pg_addrspace SPACE, bool GATED>
void run_load(const Instr& in, Batch& b) {
  const Array& a = b.program->arrays[in.array];
  const uint32_t lanes = in.lanes;
  const Slot* ptr = b.row(in.src[0]);
  const Slot* gate = GATED ? b.row(in.src[2]) : nullptr;
  Slot* out[kMaxLanes];
  const Slot* alt[kMaxLanes] = {};
  for (uint32_t l = 0; l < lanes; ++l) {
    out[l] = b.row(in.dst + l);
    if (GATED) alt[l] = b.row(in.src[1] + l);
  }
  const Region<DT, SPACE> region(b, a);
  const RaceCheck race_check(b, a);
  for_each_thread(b.active(in), [&](uint32_t t) [[gnu::always_inline]] {
    if (GATED && gate[t].i == 0) {
      for (uint32_t l = 0; l < lanes; ++l) out[l][t] = alt[l][t];
      return;
    }
    const unsigned char* p = region.at(b, in, a, t, ptr[t].i, lanes);
    if constexpr (SPACE == PG_ADDR_LOCAL) race_check(b, in, a, t, ptr[t].i, lanes, Access::read);
    for (uint32_t l = 0; l < lanes; ++l) out[l][t] = Type<DT>::read(p + l * Type<DT>::size);
  });
}

template <pg_dtype DT, pg_addrspace SPACE, bool GATED>
void run_store(const Instr& in, Batch& b) {
  const Array& a = b.program->arrays[in.array];
  const uint32_t lanes = in.lanes;
  const Slot* ptr = b.row(in.src[0]);
  const Slot* gate = GATED ? b.row(in.src[2]) : nullptr;
  const Slot* value[kMaxLanes];
  for (uint32_t l = 0; l < lanes; ++l) value[l] = b.row(in.src[1] + l);
  const Region<DT, SPACE> region(b, a);
  const RaceCheck race_check(b, a);
  for_each_thread(b.active(in), [&](uint32_t t) [[gnu::always_inline]] {
    if (GATED && gate[t].i == 0) return;
    unsigned char* p = region.at(b, in, a, t, ptr[t].i, lanes);
    if constexpr (SPACE == PG_ADDR_LOCAL) race_check(b, in, a, t, ptr[t].i, lanes, Access::write);
    for (uint32_t l = 0; l < lanes; ++l) Type<DT>::write(value[l][t], p + l * Type<DT>::size);
  });
}

/// The C type ATOMIC_ADD updates in memory for DT.
template <pg_dtype DT>
using AtomicType = std::conditional_t<
    DT == PG_DTYPE_INT32, int32_t,
    std::conditional_t<
        DT == PG_DTYPE_UINT32, uint32_t,
        std::conditional_t<
            DT == PG_DTYPE_INT64, int64_t,
            std::conditional_t<DT == PG_DTYPE_UINT64, uint64_t,
                               std::conditional_t<DT == PG_DTYPE_FLOAT32, float, double>>>>>;

template <pg_dtype DT, pg_addrspace SPACE>
void run_atomic(const Instr& in, Batch& b) {
  using T = Type<DT>;
  using C = AtomicType<DT>;
  const Array& a = b.program->arrays[in.array];
  const Slot* ptr = b.row(in.src[0]);
  const Slot* value = b.row(in.src[1]);
  const bool shared = SPACE == PG_ADDR_GLOBAL && b.atomic_global;
  const Region<DT, SPACE> region(b, a);
  const RaceCheck race_check(b, a);
  for_each_thread(b.active(in), [&](uint32_t t) [[gnu::always_inline]] {
    unsigned char* p = region.at(b, in, a, t, ptr[t].i, 1);
    if constexpr (SPACE == PG_ADDR_LOCAL) race_check(b, in, a, t, ptr[t].i, 1, Access::atomic);
    if (shared) {  // other workers update this buffer at the same time
      C add;
      if constexpr (T::is_float)
        add = static_cast<C>(value[t].f);
      else
        add = static_cast<C>(value[t].i);
      std::atomic_ref<C>(*reinterpret_cast<C*>(p)).fetch_add(add, std::memory_order_relaxed);
      return;
    }
    Slot sum, old = T::read(p);
    if constexpr (T::is_float)
      sum.f = T::round(old.f + value[t].f);
    else
      sum.i = T::wrap(static_cast<uint64_t>(old.i) + static_cast<uint64_t>(value[t].i));
    T::write(sum, p);
  });
}

}  // namespace

Handler load_handler(pg_dtype dtype, pg_addrspace space, bool gated) {
  return with_dtype(dtype, [&]<pg_dtype DT>() -> Handler {
    switch (space) {
      case PG_ADDR_GLOBAL:
        return gated ? &run_load<DT, PG_ADDR_GLOBAL, true> : &run_load<DT, PG_ADDR_GLOBAL, false>;
      case PG_ADDR_LOCAL:
        return gated ? &run_load<DT, PG_ADDR_LOCAL, true> : &run_load<DT, PG_ADDR_LOCAL, false>;
      case PG_ADDR_REG:
        return gated ? &run_load<DT, PG_ADDR_REG, true> : &run_load<DT, PG_ADDR_REG, false>;
      default:
        return nullptr;
    }
  });
}

Handler store_handler(pg_dtype dtype, pg_addrspace space, bool gated) {
  return with_dtype(dtype, [&]<pg_dtype DT>() -> Handler {
    switch (space) {
      case PG_ADDR_GLOBAL:
        return gated ? &run_store<DT, PG_ADDR_GLOBAL, true> : &run_store<DT, PG_ADDR_GLOBAL, false>;
      case PG_ADDR_LOCAL:
        return gated ? &run_store<DT, PG_ADDR_LOCAL, true> : &run_store<DT, PG_ADDR_LOCAL, false>;
      case PG_ADDR_REG:
        return gated ? &run_store<DT, PG_ADDR_REG, true> : &run_store<DT, PG_ADDR_REG, false>;
      default:
        return nullptr;
    }
  });
}

Handler atomic_handler(pg_dtype dtype, pg_addrspace space) {
  if (!atomic_dtype(dtype) || (space != PG_ADDR_GLOBAL && space != PG_ADDR_LOCAL)) return nullptr;
  return with_dtype(dtype, [&]<pg_dtype DT>() -> Handler {
    if constexpr (DT == PG_DTYPE_INT32 || DT == PG_DTYPE_UINT32 || DT == PG_DTYPE_INT64 ||
                  DT == PG_DTYPE_UINT64 || DT == PG_DTYPE_FLOAT32 || DT == PG_DTYPE_FLOAT64)
      return space == PG_ADDR_GLOBAL ? &run_atomic<DT, PG_ADDR_GLOBAL>
                                     : &run_atomic<DT, PG_ADDR_LOCAL>;
    else
      return nullptr;
  });
}

}  // namespace polygrad::gpu_emu
