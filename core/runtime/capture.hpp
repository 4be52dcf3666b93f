// Capture: record the launches of every realisation on this thread between begin and end,
// without running them, and run the recording again as many times as wanted (tinygrad's
// TinyJit, CUDA graphs). A recording holds the memory of every buffer it touches, so inputs
// written in place (host memory wrapped by the device, or assign) are read anew on each run,
// and random tensors drawn while capturing are drawn again (fresh values) on each run.
#ifndef POLYGRAD_RUNTIME_CAPTURE_HPP
#define POLYGRAD_RUNTIME_CAPTURE_HPP

#include "runtime/launch.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace polygrad::runtime {

class Capture {
 public:
  /// Runs the recording: refills, then every launch in order; waits for the devices.
  void run() const;
  /// Runs it with buffers swapped: every launch that used the memory of `inputs[i]` (BUFFER
  /// nodes used while capturing) uses that of `replacements[i]` instead (as many of each;
  /// same device, dtype and size, checked), as tinygrad's JIT feeds new input tensors to a
  /// captured function.
  void run(const std::vector<const UOp*>& inputs,
           const std::vector<const UOp*>& replacements) const;
  size_t launch_count() const { return launches_.size(); }
  size_t kernel_count() const;

 private:
  friend void record(Launch launch);
  friend void record_refill(const UOp* buffer, std::function<std::vector<unsigned char>()> fill);
  struct Refill {
    std::string device;
    std::shared_ptr<Buffer> memory;
    std::function<std::vector<unsigned char>()> fill;  ///< the buffer's new bytes
  };
  std::vector<Refill> refills_;
  std::vector<Launch> launches_;
};

/// Starts recording on this thread; throws a user Error when a capture is already open.
void capture_begin();
/// Ends the recording started on this thread (a user Error when none is open).
std::shared_ptr<Capture> capture_end();
/// Whether this thread is recording: realize then records instead of running, and reading
/// values back to the host is an error (nothing has run yet).
bool capturing();
/// Records a launch in this thread's capture.
void record(Launch launch);
/// Asks this thread's capture to refill `buffer` with fill() before each run.
void record_refill(const UOp* buffer, std::function<std::vector<unsigned char>()> fill);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_CAPTURE_HPP
