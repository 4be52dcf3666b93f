// See side_by_side.hpp.
#include "support/side_by_side.hpp"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace polygrad::support {

namespace {

thread_local bool t_helper = false;

/// One call's jobs. Its fields are guarded by the pool's mutex, except errors[i], written by
/// the one thread that ran job i and read by the caller after every job has ended.
struct Batch {
  const std::function<void(size_t)>* job;
  size_t n;
  size_t next = 0;     // the next index to hand out
  size_t running = 0;  // helpers inside one of its jobs
  std::vector<std::exception_ptr> errors;
};

void run_one(Batch& b, size_t i) {
  try {
    (*b.job)(i);
  } catch (...) {
    b.errors[i] = std::current_exception();
  }
}

class Pool {
 public:
  /// Never destroyed: helpers wait on it until the process ends.
  static Pool& get() {
    static Pool* pool = [] {
      auto* p = new Pool;
      pthread_atfork([] { get().mu_.lock(); }, [] { get().mu_.unlock(); },
                     [] { get().after_fork_in_child(); });
      return p;
    }();
    return *pool;
  }

  void run(size_t n, const std::function<void(size_t)>& job) {
    Batch b{&job, n, 0, 0, std::vector<std::exception_ptr>(n)};
    {
      std::lock_guard<std::mutex> lock(mu_);
      start_helpers(n - 1);
      pending_.push_back(&b);
    }
    work_.notify_all();
    for (;;) {
      size_t i = 0;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (b.next >= b.n) break;
        i = take(b);
      }
      run_one(b, i);
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, [&] { return b.running == 0; });
    }
    for (const std::exception_ptr& e : b.errors)
      if (e) std::rethrow_exception(e);
  }

 private:
  Pool() = default;

  /// The next index of `b`, which has one left; `b` leaves the pending list with its last.
  /// Under mu_.
  size_t take(Batch& b) {
    const size_t i = b.next++;
    if (b.next >= b.n) pending_.erase(std::find(pending_.begin(), pending_.end(), &b));
    return i;
  }

  /// Up to `jobs` helpers (fewer than the hardware threads, at most 7); where no thread can
  /// be made, the ones there are do the work. Under mu_.
  void start_helpers(size_t jobs) {
    while (helpers_ < std::min(jobs, hardware_threads() - 1)) {
      try {
        std::thread([this] { helper(); }).detach();
      } catch (const std::system_error&) {
        return;
      }
      ++helpers_;
    }
  }

  void helper() {
    t_helper = true;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_.wait(lock, [&] { return !pending_.empty(); });
      Batch& b = *pending_.front();
      const size_t i = take(b);
      ++b.running;
      lock.unlock();
      run_one(b, i);
      lock.lock();
      if (--b.running == 0) done_.notify_all();
    }
  }

  /// A child of fork has none of the helpers: the state is made anew (the forking thread held
  /// mu_, through the prepare handler) and helpers are started again when next asked for.
  void after_fork_in_child() {
    new (&mu_) std::mutex;
    new (&work_) std::condition_variable;
    new (&done_) std::condition_variable;
    pending_.clear();
    helpers_ = 0;
  }

  std::mutex mu_;
  std::condition_variable work_;  // helpers: a batch has an index left
  std::condition_variable done_;  // callers: a batch's helpers are out of its jobs
  std::vector<Batch*> pending_;   // batches with an index left, oldest first
  size_t helpers_ = 0;
};

}  // namespace

bool on_helper_thread() {
  return t_helper;
}

size_t hardware_threads() {
  static const size_t n = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  return n;
}

void side_by_side(size_t n, const std::function<void(size_t)>& job) {
  if (n == 0) return;
  if (n > 1 && !t_helper && hardware_threads() > 1) return Pool::get().run(n, job);
  std::exception_ptr first;
  for (size_t i = 0; i < n; ++i) {
    try {
      job(i);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace polygrad::support
