// polygrad plugin SDK: streams and events for devices whose work the host thread can run
// (header-only; part of plugin.hpp). Each stream is an in-order queue with a worker thread of
// its own that runs the device's blocking copies and launches; an event is a point in one
// stream's sequence. AsyncTables builds the pg_async_api on them for a plugin class with
// `has_async = true`, so a host-memory plugin (the template, cpu_clang) gets asynchronous work
// without writing any.
#ifndef POLYGRAD_HOST_STREAMS_HPP
#define POLYGRAD_HOST_STREAMS_HPP

#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>
#include <polygrad/program_check.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

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

namespace detail {

/// pg_async_api for a plugin class P (plugin.hpp) with `has_async = true`: one HostStream per
/// stream runs the device's blocking copy_in, copy_out and launch in order. Tables<P> names
/// programs here as they load, so an error of enqueued work names its kernel.
template <class P>
struct AsyncTables {
  using D = typename P::Device;
  static D* dev(pg_device_t d) { return reinterpret_cast<D*>(d); }

  /// Whether the plugin class asks for it (has_async = true; false when left out).
  static constexpr bool enabled() {
    if constexpr (requires { P::has_async; })
      return P::has_async;
    else
      return false;
  }
  /// Streams by device (loader->synchronize waits for them) and entry names by program (an
  /// error of enqueued work names its kernel).
  struct AsyncBook {
    std::mutex mutex;
    std::multimap<pg_device_t, HostStream*> streams;
    std::map<pg_program_t, std::string> names;
  };
  static AsyncBook& book() {
    static auto* b = new AsyncBook;  // never destroyed: streams may outlive static teardown
    return *b;
  }
  static void name_program(pg_program_t p, const char* entry) {
    if constexpr (enabled()) {
      std::lock_guard lock(book().mutex);
      book().names[p] = entry;
    }
  }
  static void forget_program(pg_program_t p) {
    if constexpr (enabled()) {
      std::lock_guard lock(book().mutex);
      book().names.erase(p);
    }
  }
  static std::string program_name(pg_program_t p) {
    std::lock_guard lock(book().mutex);
    auto it = book().names.find(p);
    return it == book().names.end() ? std::string("?") : it->second;
  }
  static HostStream& stream_of(pg_stream_t s) {
    if (s == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "NULL stream");
    return *reinterpret_cast<HostStream*>(s);
  }
  static HostEvent& event_of(pg_event_t e) {
    if (e == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "NULL event");
    return *reinterpret_cast<HostEvent*>(e);
  }
  static void synchronize_streams(pg_device_t d) {
    std::vector<HostStream*> mine;
    {
      std::lock_guard lock(book().mutex);
      auto [lo, hi] = book().streams.equal_range(d);
      for (auto it = lo; it != hi; ++it) mine.push_back(it->second);
    }
    for (HostStream* s : mine) s->synchronize();
  }
  static pg_status stream_create(pg_device_t d, pg_stream_t* out, pg_error* err) {
    return firewall(err, P::name, [&] {
      if (d == nullptr || out == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "stream_create: NULL");
      auto stream = std::make_unique<HostStream>();
      std::lock_guard lock(book().mutex);
      book().streams.emplace(d, stream.get());
      *out = reinterpret_cast<pg_stream_t>(stream.release());
    });
  }
  static void stream_destroy(pg_device_t d, pg_stream_t s) noexcept {
    if (s == nullptr) return;
    try {
      {
        std::lock_guard lock(book().mutex);
        auto [lo, hi] = book().streams.equal_range(d);
        for (auto it = lo; it != hi; ++it)
          if (it->second == reinterpret_cast<HostStream*>(s)) {
            book().streams.erase(it);
            break;
          }
      }
      delete reinterpret_cast<HostStream*>(s);  // runs what is queued, then stops
    } catch (...) {
    }
  }
  static pg_status stream_synchronize(pg_device_t d, pg_stream_t s, pg_error* err) {
    return firewall(err, P::name, [&] { stream_of(s).synchronize(); });
  }
  static pg_status copy_in_async(pg_device_t d, pg_stream_t s, pg_buffer_t dst, uint64_t off,
                                 const void* src, uint64_t n, pg_error* err) {
    return firewall(err, P::name, [&] {
      if (d == nullptr || dst == nullptr || (src == nullptr && n > 0))
        fail(PG_ERR_INVALID_ARGUMENT, "copy_in_async: NULL");
      stream_of(s).enqueue([d, dst, off, src, n] { dev(d)->copy_in(dst, off, src, n); },
                           "copy_in of " + std::to_string(n) + " bytes");
    });
  }
  static pg_status copy_out_async(pg_device_t d, pg_stream_t s, void* dst, pg_buffer_t src,
                                  uint64_t off, uint64_t n, pg_error* err) {
    return firewall(err, P::name, [&] {
      if (d == nullptr || src == nullptr || (dst == nullptr && n > 0))
        fail(PG_ERR_INVALID_ARGUMENT, "copy_out_async: NULL");
      stream_of(s).enqueue([d, dst, src, off, n] { dev(d)->copy_out(dst, src, off, n); },
                           "copy_out of " + std::to_string(n) + " bytes");
    });
  }
  static pg_status launch_async(pg_device_t d, pg_stream_t s, pg_program_t p,
                                const pg_launch_args* a, pg_error* err) {
    return firewall(err, P::name, [&] {
      if (d == nullptr || p == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "launch_async: NULL");
      check_launch(a);
      // The arguments are the caller's only during this call: the queued launch keeps a copy.
      struct Copy {
        pg_launch_args args;
        std::vector<pg_buffer_t> buffers;
        std::vector<int64_t> scalars;
      };
      auto copy = std::make_shared<Copy>();
      copy->args = *a;
      copy->buffers.assign(a->buffers, a->buffers + a->buffer_count);
      copy->scalars.assign(a->scalars, a->scalars + a->scalar_count);
      stream_of(s).enqueue(
          [d, p, copy] {
            copy->args.buffers = copy->buffers.data();
            copy->args.scalars = copy->scalars.data();
            dev(d)->launch(p, copy->args);
            dev(d)->synchronize();
          },
          "kernel '" + program_name(p) + "'");
    });
  }
  static pg_status event_create(pg_device_t d, pg_event_t* out, pg_error* err) {
    return firewall(err, P::name, [&] {
      if (d == nullptr || out == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "event_create: NULL");
      *out = reinterpret_cast<pg_event_t>(new HostEvent);
    });
  }
  static void event_destroy(pg_device_t, pg_event_t e) noexcept {
    delete reinterpret_cast<HostEvent*>(e);
  }
  static pg_status event_record(pg_device_t d, pg_event_t e, pg_stream_t s, pg_error* err) {
    return firewall(err, P::name, [&] {
      HostStream& stream = stream_of(s);
      HostEvent& event = event_of(e);
      event.stream = stream.state();
      event.seq = stream.last();
    });
  }
  static pg_status stream_wait_event(pg_device_t d, pg_stream_t s, pg_event_t e, pg_error* err) {
    return firewall(err, P::name, [&] {
      const HostEvent event = event_of(e);
      HostStream& stream = stream_of(s);
      if (event.stream == nullptr || event.stream == stream.state()) return;  // nothing to wait
      stream.enqueue([event] { event.stream->wait_quietly(event.seq); }, "event wait");
    });
  }
  static pg_status event_synchronize(pg_device_t d, pg_event_t e, pg_error* err) {
    return firewall(err, P::name, [&] {
      const HostEvent event = event_of(e);
      if (event.stream != nullptr) event.stream->wait_for(event.seq);
    });
  }
  static pg_status host_alloc_pinned(pg_device_t d, uint64_t n, void** out, pg_error* err) {
    return firewall(err, P::name, [&] {
      if (d == nullptr || out == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "host_alloc_pinned: NULL");
      *out = ::operator new(n > 0 ? n : 1, std::align_val_t(64));
    });
  }
  static void host_free_pinned(pg_device_t, void* host) noexcept {
    if (host != nullptr) ::operator delete(host, std::align_val_t(64));
  }
  static pg_status copy_peer_async(pg_device_t d, pg_stream_t s, pg_buffer_t dst, uint64_t doff,
                                   pg_device_t sd, pg_buffer_t src, uint64_t soff, uint64_t n,
                                   pg_error* err) {
    return firewall(err, P::name, [&] {
      if (d == nullptr || sd == nullptr || dst == nullptr || src == nullptr)
        fail(PG_ERR_INVALID_ARGUMENT, "copy_peer_async: NULL");
      stream_of(s).enqueue(
          [d, dst, doff, sd, src, soff, n] {
            std::vector<unsigned char> staging(n);
            dev(sd)->copy_out(staging.data(), src, soff, n);
            dev(d)->copy_in(dst, doff, staging.data(), n);
          },
          "copy_peer of " + std::to_string(n) + " bytes");
    });
  }

  /// The table for pg_plugin.async, or nullptr when the plugin class does not ask for it.
  static const pg_async_api* table() {
    static const pg_async_api async = {sizeof(pg_async_api),
                                       0,
                                       &stream_create,
                                       &stream_destroy,
                                       &stream_synchronize,
                                       &copy_in_async,
                                       &copy_out_async,
                                       &launch_async,
                                       &event_create,
                                       &event_destroy,
                                       &event_record,
                                       &stream_wait_event,
                                       &event_synchronize,
                                       &host_alloc_pinned,
                                       &host_free_pinned,
                                       &copy_peer_async,
                                       nullptr};  // host threads: no native stream
    return enabled() ? &async : nullptr;
  }
};

}  // namespace detail

}  // namespace polygrad::sdk

#endif  // POLYGRAD_HOST_STREAMS_HPP
