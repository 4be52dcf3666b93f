// Wall time per phase of the path from a call to its result, for POLYGRAD_TIMING=1: each phase's
// total and count, printed to stderr when the process exits (bench/first_call.py reads them).
// Off (the default), a timed scope costs one test of a flag read once.
#ifndef POLYGRAD_SUPPORT_PHASE_TIMING_HPP
#define POLYGRAD_SUPPORT_PHASE_TIMING_HPP

#include <chrono>
#include <cstdint>

namespace polygrad::timing {

/// The phases timed. discover includes plugin_open and plugin_init (every plugin found is
/// opened and initialised then), and launch includes build_wait; the others do not nest. load
/// is a plugin's load on the calling thread; build is one run side by side with others on a
/// worker of a LoadBatch (runtime/load_batch.hpp: summed over the workers, it may exceed the
/// wall time), and build_wait the calling thread's wait for one before its launch.
/// lowered_cache is the lowered-program cache's key and read (a hit, or the miss before lower).
#define POLYGRAD_PHASES(X) \
  X(discover)              \
  X(plugin_open)           \
  X(plugin_init)           \
  X(device_open)           \
  X(schedule)              \
  X(lower)                 \
  X(lowered_cache)         \
  X(render)                \
  X(load)                  \
  X(build)                 \
  X(build_wait)            \
  X(launch)                \
  X(copy_out)

enum class Phase {
#define POLYGRAD_PHASE_ENUM(name) name,
  POLYGRAD_PHASES(POLYGRAD_PHASE_ENUM)
#undef POLYGRAD_PHASE_ENUM
      count
};

/// Whether POLYGRAD_TIMING is set to a value other than 0 (read once).
bool enabled();
/// Adds `ns` to `phase`'s total and one to its count.
void record(Phase phase, int64_t ns);

/// Times its own lifetime as one run of `phase` when timing is enabled.
class Timed {
 public:
  explicit Timed(Phase phase) : phase_(phase), on_(enabled()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~Timed() {
    if (on_)
      record(phase_, std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - start_)
                         .count());
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  Phase phase_;
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace polygrad::timing

#endif  // POLYGRAD_SUPPORT_PHASE_TIMING_HPP
