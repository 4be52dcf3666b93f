// Building a realisation's new kernels side by side (see load_batch.hpp).
#include "runtime/load_batch.hpp"

#include "support/phase_timing.hpp"
#include "support/side_by_side.hpp"

#include <chrono>
#include <exception>
#include <optional>
#include <utility>

namespace polygrad::runtime {

namespace {

thread_local LoadBatch* open_batch = nullptr;

}  // namespace

// Builds at once: one per hardware thread, at most 8 (each holds a compiler's memory).
LoadBatch::LoadBatch(Failed failed)
    : failed_(std::move(failed)), outer_(open_batch), max_workers_(support::hardware_threads()) {
  open_batch = this;
}

LoadBatch::~LoadBatch() {
  open_batch = outer_;
  for (const std::shared_ptr<CompiledKernel>& k : settle()) {
    try {
      failed_(k);
    } catch (...) {
    }
  }
}

std::vector<std::shared_ptr<CompiledKernel>> LoadBatch::settle() {
  for (std::thread& t : workers_) t.join();  // each ends when the queue is empty
  workers_.clear();
  std::vector<std::shared_ptr<CompiledKernel>> failed;
  for (const std::shared_ptr<CompiledKernel>& k : started_) {
    std::shared_future<void> f = k->loading;  // complete: its worker has ended
    try {
      f.get();
    } catch (...) {
      failed.push_back(k);
    }
  }
  started_.clear();
  return failed;
}

void LoadBatch::finish() {
  const std::vector<std::shared_ptr<CompiledKernel>> failed = settle();
  for (const std::shared_ptr<CompiledKernel>& k : failed) failed_(k);
  if (!failed.empty()) loaded_program(*failed.front());  // rethrows its error
}

LoadBatch* LoadBatch::current() {
  return open_batch;
}

void LoadBatch::add(const Device& device, std::shared_ptr<CompiledKernel> kernel,
                    Artifact artifact) {
  Job job{device, kernel, std::move(artifact), {}};
  kernel->loading = job.done.get_future().share();
  std::lock_guard<std::mutex> lock(mu_);
  started_.push_back(std::move(kernel));
  queue_.push_back(std::move(job));
  if (running_ < max_workers_) {
    ++running_;
    workers_.emplace_back([this] { work(); });
  }
}

void LoadBatch::work() {
  for (;;) {
    std::optional<Job> job;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) {
        --running_;
        return;
      }
      job.emplace(std::move(queue_.front()));
      queue_.pop_front();
    }
    try {
      timing::Timed timed(timing::Phase::build);
      job->kernel->program = job->device.load(job->artifact, job->kernel->lowered.program());
      job->done.set_value();
    } catch (...) {
      job->done.set_exception(std::current_exception());
    }
  }
}

const Program& loaded_program(const CompiledKernel& kernel) {
  if (kernel.loading.valid()) {
    std::shared_future<void> f = kernel.loading;  // a copy per waiting thread
    if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      timing::Timed timed(timing::Phase::build_wait);
      f.wait();
    }
    f.get();
  }
  return kernel.program;
}

}  // namespace polygrad::runtime
