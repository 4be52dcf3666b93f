// The memory of a pg_ccl_buffer as host memory: host memory as it is, a device buffer through
// its host pointer (host-memory devices) or a staging copy made with the device plugin's own
// allocator.
#include "comm.hpp"

#include <cstdlib>
#include <new>

namespace polygrad::ccl_mpi {

namespace {

/// Runs a device plugin call; its failure becomes an sdk::Error naming `what`.
template <class Fn>
void device_call(const char* op, const std::string& what, Fn&& fn) {
  pg_error err;
  err.message[0] = '\0';
  pg_status s = fn(&err);
  if (s == PG_OK) return;
  err.message[PG_ERROR_MESSAGE_MAX - 1] = '\0';
  sdk::fail(s, std::string("staging ") + what + ": the device plugin's " + op + " failed with " +
                   sdk::status_name(s) + ": " + err.message);
}

}  // namespace

HostView::HostView(const pg_ccl_buffer* b, uint64_t bytes, pg_stream_t stream, const char* what)
    : buffer_(b), bytes_(bytes), what_(what) {
  if (b == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string("the ") + what + " is NULL");
  if (!PG_HAS_FIELD(b, pg_ccl_buffer, offset))
    sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string("the ") + what + "'s struct_size " +
                                           std::to_string(b->struct_size) + " is too small");
  if (b->buffer == nullptr) {
    if (b->host == nullptr && bytes > 0)
      sdk::fail(PG_ERR_INVALID_ARGUMENT,
                std::string("the ") + what + " has neither a device buffer nor host memory");
    data_ = static_cast<char*>(b->host) + b->offset;
    return;
  }
  const pg_plugin* dev = b->device_plugin;
  if (dev == nullptr || dev->allocator == nullptr)
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              std::string("the ") + what + " is a device buffer without its device plugin");
  const pg_allocator_api* a = dev->allocator;
  // The stream's work (what produced the data) comes first.
  if (stream != nullptr) {
    const pg_async_api* as = PG_HAS_FIELD(dev, pg_plugin, async)
                                 ? dev->async
                                 : static_cast<const pg_async_api*>(nullptr);
    if (as == nullptr || as->stream_synchronize == nullptr)
      sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string("a stream was given for the ") + what +
                                             ", but its device plugin has no streams");
    device_call("stream_synchronize", what_,
                [&](pg_error* e) { return as->stream_synchronize(b->device, stream, e); });
  }
  if (PG_HAS_FIELD(a, pg_allocator_api, host_pointer) && a->host_pointer != nullptr) {
    if (void* p = a->host_pointer(b->device, b->buffer)) {
      data_ = static_cast<char*>(p) + b->offset;
      return;
    }
  }
  void* p = std::malloc(bytes > 0 ? bytes : 1);
  if (p == nullptr) throw std::bad_alloc();
  staging_ = std::shared_ptr<void>(p, std::free);
  data_ = p;
}

void HostView::fetch() {
  if (!staging_ || bytes_ == 0) return;
  const pg_ccl_buffer* b = buffer_;
  device_call("copy_out", what_, [&](pg_error* e) {
    return b->device_plugin->allocator->copy_out(b->device, data_, b->buffer, b->offset, bytes_, e);
  });
}

void HostView::store() {
  if (!staging_ || bytes_ == 0) return;
  const pg_ccl_buffer* b = buffer_;
  device_call("copy_in", what_, [&](pg_error* e) {
    return b->device_plugin->allocator->copy_in(b->device, b->buffer, b->offset, data_, bytes_, e);
  });
}

}  // namespace polygrad::ccl_mpi
