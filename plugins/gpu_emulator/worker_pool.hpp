// A fixed set of host threads that run one job at a time, the caller taking part.
#ifndef POLYGRAD_GPU_EMU_WORKER_POOL_HPP
#define POLYGRAD_GPU_EMU_WORKER_POOL_HPP

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace polygrad::gpu_emu {

class WorkerPool {
 public:
  /// `workers` threads in all, the caller counted; the others start at the first job that
  /// needs them.
  explicit WorkerPool(uint32_t workers) : workers_(workers < 1 ? 1 : workers) {}
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  uint32_t size() const { return workers_; }

  /// Runs job(w) for w in [0, n) (n <= size()) at once, the caller running job(0), and returns
  /// when every one has. `job` must not throw. One job at a time: the caller serialises.
  void run(uint32_t n, const std::function<void(uint32_t)>& job);

 private:
  void start();
  void loop(uint32_t index);

  const uint32_t workers_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(uint32_t)>* job_ = nullptr;
  uint32_t wanted_ = 0;      ///< workers 1 .. wanted_ - 1 take part in the current job
  uint64_t generation_ = 0;  ///< bumped per job
  uint32_t running_ = 0;     ///< helpers still in the current job
  bool stop_ = false;
};

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_WORKER_POOL_HPP
