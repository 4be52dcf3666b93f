// polygrad::Stream, Event and PinnedMemory over a plugin's pg_async_api; on a device without
// one, each item runs at once through the blocking calls.
#include <polygrad/stream.hpp>

#include "../plugin/loaded_plugin.hpp"

#include <utility>

namespace polygrad {

using detail::call_plugin;

const pg_async_api* Device::async_api() const {
  if (!PG_HAS_FIELD(plugin_->table, pg_plugin, async) || plugin_->table->async == nullptr)
    return nullptr;
  const pg_async_api* a = plugin_->table->async;
  const bool complete = PG_HAS_FIELD(a, pg_async_api, event_synchronize) && a->stream_create &&
                        a->stream_destroy && a->stream_synchronize && a->copy_in_async &&
                        a->copy_out_async && a->launch_async && a->event_create &&
                        a->event_destroy && a->event_record && a->stream_wait_event &&
                        a->event_synchronize;
  return complete ? a : nullptr;
}

bool Device::has_async() const {
  return async_api() != nullptr;
}

Stream Device::create_stream() const {
  Stream s;
  s.device_ = *this;
  if (const pg_async_api* a = async_api())
    call_plugin(*plugin_, "stream_create", name_,
                [&](pg_error* err) { return a->stream_create(device_, &s.stream_, err); });
  return s;
}

Event Device::create_event() const {
  Event e;
  e.plugin_ = plugin_;
  e.device_ = device_;
  e.device_name_ = name_;
  if (const pg_async_api* a = async_api())
    call_plugin(*plugin_, "event_create", name_,
                [&](pg_error* err) { return a->event_create(device_, &e.event_, err); });
  return e;
}

PinnedMemory Device::alloc_pinned(uint64_t nbytes) const {
  PinnedMemory m;
  m.size_ = nbytes;
  const pg_async_api* a = async_api();
  if (a != nullptr && PG_HAS_FIELD(a, pg_async_api, host_free_pinned) && a->host_alloc_pinned &&
      a->host_free_pinned) {
    call_plugin(*plugin_, "host_alloc_pinned", name_, [&](pg_error* err) {
      return a->host_alloc_pinned(device_, nbytes, &m.data_, err);
    });
    m.plugin_ = plugin_;
    m.device_ = device_;
    return m;
  }
  m.data_ = ::operator new(nbytes > 0 ? nbytes : 1, std::align_val_t(64));
  return m;
}

// ---------------------------------------------------------------------------------------------
// Stream

Stream::Stream(Stream&& other) noexcept {
  *this = std::move(other);
}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::move(other.device_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() {
  reset();
}

void Stream::reset() noexcept {
  if (stream_ != nullptr)
    if (const pg_async_api* a = async())
      detail::release_in_plugin(device_.plugin_->name, "stream_destroy",
                                [&] { a->stream_destroy(device_.device_, stream_); });
  stream_ = nullptr;
}

const pg_async_api* Stream::async() const {
  return device_.plugin_ ? device_.async_api() : nullptr;
}

void Stream::copy_in(Buffer& dst, const void* src, uint64_t nbytes, uint64_t dst_offset) const {
  if (stream_ == nullptr) return device_.copy_in(dst, src, nbytes, dst_offset);
  device_.check_buffer("copy_in_async", dst, dst_offset, nbytes);
  call_plugin(*device_.plugin_, "copy_in_async", device_.name_, [&](pg_error* err) {
    return async()->copy_in_async(device_.device_, stream_, dst.handle(), dst_offset, src, nbytes,
                                  err);
  });
}

void Stream::copy_out(void* dst, const Buffer& src, uint64_t nbytes, uint64_t src_offset) const {
  if (stream_ == nullptr) return device_.copy_out(dst, src, nbytes, src_offset);
  device_.check_buffer("copy_out_async", src, src_offset, nbytes);
  call_plugin(*device_.plugin_, "copy_out_async", device_.name_, [&](pg_error* err) {
    return async()->copy_out_async(device_.device_, stream_, dst, src.handle(), src_offset, nbytes,
                                   err);
  });
}

void Stream::copy_from(Buffer& dst, const Buffer& src, uint64_t nbytes, uint64_t dst_offset,
                       uint64_t src_offset) const {
  const pg_async_api* a = async();
  const bool peer = stream_ != nullptr && src.valid() && src.plugin_ == device_.plugin_ &&
                    PG_HAS_FIELD(a, pg_async_api, copy_peer_async) && a->copy_peer_async;
  if (!peer) {
    // Another plugin, or no peer copy: in order with this stream's work, through the host.
    synchronize();
    return device_.copy_device(dst, src, nbytes, dst_offset, src_offset);
  }
  device_.check_buffer("copy_peer_async", dst, dst_offset, nbytes);
  if (src_offset > src.size() || nbytes > src.size() - src_offset)
    user_error("[copy_peer_async] " + device_.name_ + ": " + std::to_string(nbytes) +
               " bytes at offset " + std::to_string(src_offset) + " exceed the source buffer's " +
               std::to_string(src.size()) + " bytes");
  call_plugin(*device_.plugin_, "copy_peer_async", device_.name_, [&](pg_error* err) {
    return a->copy_peer_async(device_.device_, stream_, dst.handle(), dst_offset, src.device_,
                              src.handle(), src_offset, nbytes, err);
  });
}

void Stream::launch(const Program& program, const LaunchArgs& args) const {
  if (stream_ == nullptr) return device_.launch(program, args);
  if (!program.valid()) user_error("[launch_async] " + device_.name_ + ": the program is empty");
  std::vector<pg_buffer_t> handles;
  pg_launch_args raw = device_.raw_args("launch_async", args, handles);
  auto op = [&] { return "launch_async '" + program.entry() + "'"; };
  call_plugin(*device_.plugin_, op, device_.name_, [&](pg_error* err) {
    return async()->launch_async(device_.device_, stream_, program.handle(), &raw, err);
  });
}

void Stream::record(Event& event) const {
  if (event.plugin_ != device_.plugin_ || event.device_ != device_.device_)
    user_error("[event_record] " + device_.name_ + ": the event belongs to " +
               (event.device_name_.empty() ? std::string("no device") : event.device_name_));
  if (stream_ == nullptr) return;  // everything before this point has already run
  call_plugin(*device_.plugin_, "event_record", device_.name_, [&](pg_error* err) {
    return async()->event_record(device_.device_, event.event_, stream_, err);
  });
}

void Stream::wait(const Event& event) const {
  if (event.event_ == nullptr) return;  // an event of a synchronous device is always complete
  if (stream_ == nullptr || event.plugin_ != device_.plugin_) return event.synchronize();
  call_plugin(*device_.plugin_, "stream_wait_event", device_.name_, [&](pg_error* err) {
    return async()->stream_wait_event(device_.device_, stream_, event.event_, err);
  });
}

void Stream::synchronize() const {
  if (stream_ == nullptr) {
    if (device_.plugin_) device_.synchronize();
    return;
  }
  call_plugin(*device_.plugin_, "stream_synchronize", device_.name_, [&](pg_error* err) {
    return async()->stream_synchronize(device_.device_, stream_, err);
  });
}

// ---------------------------------------------------------------------------------------------
// Event and PinnedMemory

Event::Event(Event&& other) noexcept {
  *this = std::move(other);
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    reset();
    plugin_ = std::move(other.plugin_);
    device_ = std::exchange(other.device_, nullptr);
    event_ = std::exchange(other.event_, nullptr);
    device_name_ = std::move(other.device_name_);
  }
  return *this;
}

Event::~Event() {
  reset();
}

void Event::reset() noexcept {
  if (event_ != nullptr && plugin_)
    detail::release_in_plugin(plugin_->name, "event_destroy",
                              [&] { plugin_->table->async->event_destroy(device_, event_); });
  event_ = nullptr;
  plugin_.reset();
}

void Event::synchronize() const {
  if (event_ == nullptr) return;
  call_plugin(*plugin_, "event_synchronize", device_name_, [&](pg_error* err) {
    return plugin_->table->async->event_synchronize(device_, event_, err);
  });
}

PinnedMemory::PinnedMemory(PinnedMemory&& other) noexcept {
  *this = std::move(other);
}

PinnedMemory& PinnedMemory::operator=(PinnedMemory&& other) noexcept {
  if (this != &other) {
    reset();
    plugin_ = std::move(other.plugin_);
    device_ = std::exchange(other.device_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

PinnedMemory::~PinnedMemory() {
  reset();
}

void PinnedMemory::reset() noexcept {
  if (data_ != nullptr) {
    if (plugin_)
      detail::release_in_plugin(plugin_->name, "host_free_pinned",
                                [&] { plugin_->table->async->host_free_pinned(device_, data_); });
    else
      ::operator delete(data_, std::align_val_t(64));
  }
  data_ = nullptr;
  plugin_.reset();
  size_ = 0;
}

}  // namespace polygrad
