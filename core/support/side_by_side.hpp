// Independent jobs run side by side: the calling thread and helper threads of a pool kept for
// the process's life (one fewer than the hardware threads, at most 7) take job indices in turn
// until none is left. Used where the host does the same costly pure work several times over,
// such as scheduling one graph at several probe values of its variable.
//
// The helpers are made at the first call that has two jobs or more, never exit, and are made
// again in a child after fork (a child has none of its parent's threads). A job run from a
// helper that itself asks for jobs side by side runs them in order on that helper.
#ifndef POLYGRAD_SUPPORT_SIDE_BY_SIDE_HPP
#define POLYGRAD_SUPPORT_SIDE_BY_SIDE_HPP

#include <cstddef>
#include <functional>

namespace polygrad::support {

/// Runs job(0), ..., job(n - 1), each once, on this thread and the pool's helpers; returns when
/// all have ended. A job that throws does not stop the others; the first exception (by index)
/// is rethrown here once all have ended.
void side_by_side(size_t n, const std::function<void(size_t)>& job);

/// Whether the calling thread is one of the pool's helpers.
bool on_helper_thread();

/// The machine's hardware threads, at most 8: the host's limit for work side by side (the
/// pool's helpers and the caller; a LoadBatch's builds). Read once: it reads a file each time.
size_t hardware_threads();

}  // namespace polygrad::support

#endif  // POLYGRAD_SUPPORT_SIDE_BY_SIDE_HPP
