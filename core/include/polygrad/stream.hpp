// polygrad::Stream, Event and PinnedMemory: asynchronous copies and launches on a device
// (SDK 1.3 pg_async_api). On a device whose plugin has no async table a stream runs each item
// at once, in order, so code written for streams runs on every device.
//
//   polygrad::Stream s = device.create_stream();
//   s.copy_in(buffer, pinned.data(), n);   // the memory stays valid until s passes this point
//   s.launch(program, args);
//   polygrad::Event done = device.create_event();
//   s.record(done);
//   other.wait(done);                      // other's later work waits for s's work so far
//   s.synchronize();                       // throws the first failure, naming the kernel
#ifndef POLYGRAD_STREAM_HPP
#define POLYGRAD_STREAM_HPP

#include <polygrad/device.hpp>
#include <polygrad/export.hpp>

#include <memory>
#include <string>

namespace polygrad {

/// A point in a stream. Move-only; destroyed through its plugin.
class POLYGRAD_API Event {
 public:
  Event() = default;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  /// Wait until the point recorded last is reached; throws a failure of the work before it.
  void synchronize() const;

 private:
  friend class Device;
  friend class Stream;
  void reset() noexcept;
  std::shared_ptr<detail::LoadedPlugin> plugin_;
  pg_device_t device_ = nullptr;
  pg_event_t event_ = nullptr;  ///< null on a device without async work: always complete
  std::string device_name_;
};

/// An in-order queue of copies and launches on one device. Move-only; destroying it waits
/// for its work.
class POLYGRAD_API Stream {
 public:
  Stream() = default;
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  /// Host -> device; `src` must stay valid until the stream has passed this point.
  void copy_in(Buffer& dst, const void* src, uint64_t nbytes, uint64_t dst_offset = 0) const;
  /// Device -> host; `dst` holds the bytes once the stream has passed this point.
  void copy_out(void* dst, const Buffer& src, uint64_t nbytes, uint64_t src_offset = 0) const;
  /// Copy from a buffer of another device of the same plugin (peer to peer), or of any device
  /// through host memory. The source device's work is not waited for (see Event).
  void copy_from(Buffer& dst, const Buffer& src, uint64_t nbytes, uint64_t dst_offset = 0,
                 uint64_t src_offset = 0) const;
  /// Enqueue a launch; the buffers must live until the stream has passed it.
  void launch(const Program& program, const LaunchArgs& args) const;
  /// Mark this point in `event`.
  void record(Event& event) const;
  /// Later work on this stream waits until `event`'s point is reached.
  void wait(const Event& event) const;
  /// Wait for everything enqueued so far; throws the first failure, naming the kernel.
  void synchronize() const;
  /// Whether the plugin runs this stream's work asynchronously.
  bool asynchronous() const { return stream_ != nullptr; }

 private:
  friend class Device;
  void reset() noexcept;
  const pg_async_api* async() const;
  Device device_;
  pg_stream_t stream_ = nullptr;
};

/// Host memory a device copies from and to without staging (page-locked where the plugin
/// offers it; ordinary memory otherwise). Move-only.
class POLYGRAD_API PinnedMemory {
 public:
  PinnedMemory() = default;
  PinnedMemory(PinnedMemory&& other) noexcept;
  PinnedMemory& operator=(PinnedMemory&& other) noexcept;
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  ~PinnedMemory();
  void* data() const { return data_; }
  uint64_t size() const { return size_; }
  /// Whether the plugin allocated it (host_alloc_pinned) rather than the host.
  bool pinned() const { return plugin_ != nullptr; }

 private:
  friend class Device;
  void reset() noexcept;
  std::shared_ptr<detail::LoadedPlugin> plugin_;
  pg_device_t device_ = nullptr;
  void* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace polygrad

#endif  // POLYGRAD_STREAM_HPP
