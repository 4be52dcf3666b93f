// Building the new kernels of one realisation side by side, on devices whose loader may run on
// several threads at once (PG_LOADER_CONCURRENT_LOAD). A LoadBatch lives for one realize: while
// it is open on a thread, the program cache lowers and renders each new kernel on that thread
// (in order, under its lock) and hands the build (the plugin's load: a compile, a link) to the
// batch, whose workers, up to one per hardware thread, run them in the order given. A kernel's
// launch waits for its own build only (loaded_program), so the first kernels run while later
// ones compile. Closing the batch waits for every build it started; a failed build leaves its
// error in the kernel (rethrown by every wait) and goes to `failed`, for the cache to forget.
#ifndef POLYGRAD_RUNTIME_LOAD_BATCH_HPP
#define POLYGRAD_RUNTIME_LOAD_BATCH_HPP

#include "runtime/launch.hpp"

#include <polygrad/device.hpp>

#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace polygrad::runtime {

class LoadBatch {
 public:
  using Failed = std::function<void(const std::shared_ptr<CompiledKernel>&)>;

  /// Opens a batch on this thread (nested batches: the innermost takes the builds).
  explicit LoadBatch(Failed failed);
  /// Waits for every build, then reports each failed one to `failed`.
  ~LoadBatch();
  LoadBatch(const LoadBatch&) = delete;
  LoadBatch& operator=(const LoadBatch&) = delete;

  /// The batch open on this thread, or nullptr.
  static LoadBatch* current();

  /// Builds `artifact` into `kernel->program` on a worker; `kernel->loading` completes then.
  void add(const Device& device, std::shared_ptr<CompiledKernel> kernel, Artifact artifact);

  /// Waits for every build so far; reports each failed one to `failed` and rethrows the first
  /// failure (in the order the builds were added). A capture calls it: its kernels run later.
  void finish();

 private:
  struct Job {
    Device device;
    std::shared_ptr<CompiledKernel> kernel;
    Artifact artifact;
    std::promise<void> done;
  };
  void work();
  /// Joins the workers; the failed kernels not yet reported, in order.
  std::vector<std::shared_ptr<CompiledKernel>> settle();

  Failed failed_;
  LoadBatch* outer_;
  size_t max_workers_;
  std::mutex mu_;
  std::deque<Job> queue_;
  size_t running_ = 0;  // workers taking jobs
  std::vector<std::thread> workers_;
  std::vector<std::shared_ptr<CompiledKernel>> started_;
};

/// `kernel`'s program, once built (waits for a batch's build; rethrows its error).
const Program& loaded_program(const CompiledKernel& kernel);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_LOAD_BATCH_HPP
