#include "worker_pool.hpp"

namespace polygrad::gpu_emu {

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::start() {
  for (uint32_t w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { loop(w); });
}

void WorkerPool::run(uint32_t n, const std::function<void(uint32_t)>& job) {
  if (n <= 1) {
    job(0);
    return;
  }
  if (threads_.empty()) start();
  {
    std::lock_guard lock(mu_);
    job_ = &job;
    wanted_ = n < workers_ ? n : workers_;
    running_ = wanted_ - 1;
    ++generation_;
  }
  wake_.notify_all();
  job(0);
  std::unique_lock lock(mu_);
  done_.wait(lock, [this] { return running_ == 0; });
  job_ = nullptr;
}

void WorkerPool::loop(uint32_t index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(uint32_t)>* job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= wanted_) continue;
      job = job_;
    }
    (*job)(index);
    {
      std::lock_guard lock(mu_);
      --running_;
    }
    done_.notify_one();
  }
}

}  // namespace polygrad::gpu_emu
