// The runtime: device buffers behind BUFFER nodes, realize (schedule -> codegen -> launch),
// and host transfers. Thread-safe; one global state per process.
#ifndef POLYGRAD_RUNTIME_RUNTIME_HPP
#define POLYGRAD_RUNTIME_RUNTIME_HPP

#include "tensor/lazy.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::runtime {

/// The canonical name of a device ("cpu" -> "cpu:0"); throws polygrad::Error (user) naming the
/// device when no loaded plugin serves it. "" means the default device.
std::string canonical_device(const std::string& name);

/// A BUFFER node of `count` elements of `dtype` on `device` (canonical name). Device memory
/// is allocated on first write and freed when the node dies.
UOpRef new_buffer(const std::string& device, DType dtype, int64_t count);

/// The device of a BUFFER node.
std::string buffer_device(const UOp* buffer);

/// A realised tensor of `shape` holding a copy of `data` (numel(shape) elements of dtype,
/// packed, row-major): RESHAPE(BUFFER, shape).
UOpRef from_host(const std::string& device, DType dtype, const lazy::Shape& shape,
                 const void* data);

/// Writes `count` packed elements, those from element `first` on, at `out`.
using FillFn = std::function<void(void* out, int64_t first, int64_t count)>;

/// A realised tensor of `shape` whose elements `fill` writes (a conversion from a file's
/// format): straight into the device's buffer where the device shows it to the host (the cpu),
/// else through a staging buffer of kFillPartBytes, one part at a time, each copied in while it
/// is still in cache. Either way one pass over the source, not a converted copy then a copy.
UOpRef from_host_fill(const std::string& device, DType dtype, const lazy::Shape& shape,
                      const FillFn& fill);
inline constexpr int64_t kFillPartBytes = int64_t{1} << 20;

/// Owns a callback that must run exactly once: take() hands it on to a new owner; otherwise the
/// destructor runs it (so every error path out of the owner's scope runs it too).
class ReleaseOnce {
 public:
  explicit ReleaseOnce(std::function<void()> fn) : fn_(std::move(fn)) {}
  ReleaseOnce(const ReleaseOnce&) = delete;
  ReleaseOnce& operator=(const ReleaseOnce&) = delete;
  ~ReleaseOnce() {
    if (fn_) fn_();
  }
  std::function<void()> take() { return std::exchange(fn_, nullptr); }

 private:
  std::function<void()> fn_;
};

/// Like from_host, but over `data` itself where the device can use host memory in place
/// (Device::wrap_host): no copy, kernels read `data` when they run, writes go into it.
/// `release` runs once the memory is no longer used: with the last use of the buffer, or
/// before returning when the data was copied (`*shared` says which) or an error is thrown.
UOpRef from_host_memory(const std::string& device, DType dtype, const lazy::Shape& shape,
                        void* data, std::function<void()> release, bool* shared);

/// Realise every root (tensor-level nodes; all computed on `device`, inputs on other devices
/// are copied) and return each one's realised form: RESHAPE(BUFFER, shape) with a contiguous
/// buffer. Roots that are already realised come back as they are. Kernels run in one schedule,
/// so ASSIGNs see the reads that precede them (WAR) and each other in order (WAW).
std::vector<UOpRef> realize(const std::vector<UOpRef>& roots, const std::string& device);

}  // namespace polygrad::runtime

namespace polygrad::schedule {
struct Schedule;
}

namespace polygrad::runtime {

/// The memory planner: intermediates of `s` whose lifetimes (first to last item that uses
/// them) do not overlap share one allocation (same device, large enough). realize runs it.
void plan_memory(const schedule::Schedule& s);

/// Number of kernels lowered and compiled so far (each distinct kernel AST once per device, and
/// again after the cache dropped it).
size_t compiled_kernel_count();

/// Number of compiled kernels the cache holds now: at most the limit (4096 unless set), the
/// least recently used dropped beyond it.
size_t loaded_kernel_count();

/// Sets that limit (tests use a small one); dropping down to it at the next compile.
void set_loaded_kernel_limit(size_t limit);

/// Copy a realised tensor (from realize or from_host) into `dst`: numel * itemsize bytes.
void to_host(const UOpRef& realized, void* dst);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_RUNTIME_HPP
