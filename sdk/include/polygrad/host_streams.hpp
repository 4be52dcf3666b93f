// polygrad plugin SDK: streams and events for devices whose work the host thread can run
// (header-only). Each stream is an in-order queue with a worker thread of its own that runs
// the device's blocking copies and launches; an event is a point in one stream's sequence.
// plugin.hpp builds the pg_async_api on it for a plugin class with `has_async = true`, so a
// host-memory plugin (the template, cpu_clang) gets asynchronous work without writing any.
#ifndef POLYGRAD_HOST_STREAMS_HPP
#define POLYGRAD_HOST_STREAMS_HPP

#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace polygrad::sdk {

/// The shared part of a stream: its queue, how far it has run, and its first failure. Events
/// hold it too, so an event outlives the stream it was recorded on.
struct HostStreamState {
  std::mutex mutex;
  std::condition_variable changed;
  struct Item {
    std::function<void()> work;  ///< empty: a marker with nothing to run
    std::string what;            ///< names the item in an error ("kernel 'E_4'")
  };
  std::deque<Item> queue;
  uint64_t enqueued = 0;  ///< items enqueued so far
  uint64_t done = 0;      ///< items run (or skipped after a failure) so far
  bool stopping = false;
  // The first failure not yet reported: the item's sequence number, status and message, and
  // how many items after it were skipped.
  uint64_t failed_at = 0;  ///< 0: none
  pg_status failed_status = PG_OK;
  std::string failed_message;
  uint64_t skipped = 0;

  /// Wait until items 1..seq have run. Then, when one of them failed, take the failure and
  /// throw it (status kept); the stream accepts work again afterwards.
  void wait_for(uint64_t seq);
  /// Wait until items 1..seq have run, leaving any failure to be reported by its stream.
  void wait_quietly(uint64_t seq) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return done >= seq; });
  }
};

/// An in-order work queue with its own thread.
class HostStream {
 public:
  HostStream() : state_(std::make_shared<HostStreamState>()), thread_([this] { run(); }) {}
  ~HostStream() {
    {
      std::lock_guard lock(state_->mutex);
      state_->stopping = true;
    }
    state_->changed.notify_all();
    thread_.join();
  }
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  /// Enqueue `work`; it runs after everything enqueued before. Returns its sequence number.
  uint64_t enqueue(std::function<void()> work, std::string what) {
    uint64_t seq;
    {
      std::lock_guard lock(state_->mutex);
      state_->queue.push_back({std::move(work), std::move(what)});
      seq = ++state_->enqueued;
    }
    state_->changed.notify_all();
    return seq;
  }
  /// The sequence number of the last item enqueued (0: none).
  uint64_t last() const {
    std::lock_guard lock(state_->mutex);
    return state_->enqueued;
  }
  /// Wait for everything enqueued so far; throw the first failure among it.
  void synchronize() { state_->wait_for(last()); }
  const std::shared_ptr<HostStreamState>& state() const { return state_; }

 private:
  void run() {
    HostStreamState& s = *state_;
    std::unique_lock lock(s.mutex);
    for (;;) {
      s.changed.wait(lock, [&] { return s.stopping || !s.queue.empty(); });
      if (s.queue.empty()) return;  // stopping, with nothing left to run
      HostStreamState::Item item = std::move(s.queue.front());
      s.queue.pop_front();
      const uint64_t seq = s.done + 1;
      if (s.failed_at != 0) {
        ++s.skipped;  // later work depends on what failed
      } else if (item.work) {
        lock.unlock();
        pg_status status = PG_OK;
        std::string message;
        try {
          item.work();
        } catch (const Error& e) {
          status = e.status();
          message = e.what();
        } catch (const std::exception& e) {
          status = PG_ERR_INTERNAL;
          message = e.what();
        } catch (...) {
          status = PG_ERR_INTERNAL;
          message = "unknown exception";
        }
        lock.lock();
        if (status != PG_OK && s.failed_at == 0) {
          s.failed_at = seq;
          s.failed_status = status;
          s.failed_message = item.what + " failed: " + message;
        }
      }
      s.done = seq;
      s.changed.notify_all();
    }
  }
  std::shared_ptr<HostStreamState> state_;
  std::thread thread_;
};

inline void HostStreamState::wait_for(uint64_t seq) {
  std::unique_lock lock(mutex);
  changed.wait(lock, [&] { return done >= seq; });
  if (failed_at == 0 || failed_at > seq) return;
  std::string message = failed_message;
  if (skipped > 0)
    message += " (" + std::to_string(skipped) + " later item" + (skipped == 1 ? "" : "s") +
               " of the stream skipped)";
  const pg_status status = failed_status;
  failed_at = 0;
  failed_status = PG_OK;
  failed_message.clear();
  skipped = 0;
  throw Error(status, message);
}

/// A point in a stream: complete once the stream has run `seq` items.
struct HostEvent {
  std::shared_ptr<HostStreamState> stream;  ///< null: never recorded (complete)
  uint64_t seq = 0;
};

}  // namespace polygrad::sdk

#endif  // POLYGRAD_HOST_STREAMS_HPP
