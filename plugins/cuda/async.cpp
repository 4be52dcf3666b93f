// Streams, events and pinned memory on the driver's own streams and events (pg_async_api):
// copies and launches enqueued on a stream run in order, concurrently with the host and with
// other streams; a fault of enqueued work is reported by the next wait on that stream, with
// the names of the kernels launched on it since the last one.
#include <polygrad/plugin_error.hpp>

#include "device.hpp"

namespace polygrad::cuda {

Queue* Device::stream_create() {
  make_current();
  auto q = std::make_unique<Queue>();
  check(driver().cuStreamCreate(&q->stream, CU_STREAM_NON_BLOCKING), "stream_create");
  return q.release();
}

void Device::stream_destroy(Queue* q) {
  std::unique_ptr<Queue> owned(q);
  make_current();
  driver().cuStreamSynchronize(q->stream);  // unreported errors are dropped, as the ABI says
  driver().cuStreamDestroy_v2(q->stream);
}

void Device::copy_in_async(Queue& q, pg_buffer_t dst, uint64_t offset, const void* src,
                           uint64_t n) {
  check_range(dst, offset, n, "copy_in_async");
  make_current();
  check(driver().cuMemcpyHtoDAsync_v2(buffer_of(dst)->ptr + offset, src, n, q.stream),
        "copy_in_async");
}

void Device::copy_out_async(Queue& q, void* dst, pg_buffer_t src, uint64_t offset, uint64_t n) {
  check_range(src, offset, n, "copy_out_async");
  make_current();
  check(driver().cuMemcpyDtoHAsync_v2(dst, buffer_of(src)->ptr + offset, n, q.stream),
        "copy_out_async");
}

void Device::copy_peer_async(Queue& q, pg_buffer_t dst, uint64_t dst_offset, Device& src_device,
                             pg_buffer_t src, uint64_t src_offset, uint64_t n) {
  check_range(dst, dst_offset, n, "copy_peer_async");
  check_range(src, src_offset, n, "copy_peer_async");
  make_current();
  check(driver().cuMemcpyPeerAsync(buffer_of(dst)->ptr + dst_offset, context_,
                                   buffer_of(src)->ptr + src_offset, src_device.context_, n,
                                   q.stream),
        "copy_peer_async from " + src_device.name_);
}

void Device::launch_async(Queue& q, pg_program_t program, const pg_launch_args& args) {
  make_current();
  enqueue(q, *reinterpret_cast<Program*>(program), args);
}

CUevent Device::event_create() {
  make_current();
  CUevent e = nullptr;
  check(driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "event_create");
  return e;
}

void Device::event_destroy(CUevent e) {
  make_current();
  driver().cuEventDestroy_v2(e);
}

void Device::event_record(CUevent e, Queue& q) {
  make_current();
  check(driver().cuEventRecord(e, q.stream), "event_record");
}

void Device::stream_wait_event(Queue& q, CUevent e) {
  make_current();
  check(driver().cuStreamWaitEvent(q.stream, e, 0), "stream_wait_event");
}

void Device::event_synchronize(CUevent e) {
  make_current();
  check(driver().cuEventSynchronize(e), "event_synchronize");
}

void* Device::host_alloc_pinned(uint64_t nbytes) {
  make_current();
  void* p = nullptr;
  const CUresult r = driver().cuMemHostAlloc(&p, nbytes ? nbytes : 1, CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    sdk::fail(PG_ERR_OUT_OF_MEMORY,
              name_ + ": cannot pin " + std::to_string(nbytes) + " bytes of host memory");
  check(r, "host_alloc_pinned");
  return p;
}

void Device::host_free_pinned(void* host) {
  make_current();
  driver().cuMemFreeHost(host);
}

// --- the C table -------------------------------------------------------------------------------

namespace {

Device& dev(pg_device_t d) {
  if (d == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "cuda: device is NULL");
  return *reinterpret_cast<Device*>(d);
}
Queue& queue(pg_stream_t s) {
  if (s == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "cuda: stream is NULL");
  return *reinterpret_cast<Queue*>(s);
}
CUevent event(pg_event_t e) {
  if (e == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "cuda: event is NULL");
  return reinterpret_cast<CUevent>(e);
}
template <class Fn>
pg_status guard(pg_error* err, Fn&& fn) {
  return sdk::detail::firewall(err, "cuda", std::forward<Fn>(fn));
}

const pg_async_api kAsync = {
    sizeof(pg_async_api),
    0,
    [](pg_device_t d, pg_stream_t* out, pg_error* err) {
      return guard(err, [&] {
        if (out == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "stream_create: out is NULL");
        *out = reinterpret_cast<pg_stream_t>(dev(d).stream_create());
      });
    },
    [](pg_device_t d, pg_stream_t s) {
      if (d != nullptr && s != nullptr) guard(nullptr, [&] { dev(d).stream_destroy(&queue(s)); });
    },
    [](pg_device_t d, pg_stream_t s, pg_error* err) {
      return guard(err, [&] { dev(d).stream_synchronize(queue(s)); });
    },
    [](pg_device_t d, pg_stream_t s, pg_buffer_t dst, uint64_t off, const void* src, uint64_t n,
       pg_error* err) {
      return guard(err, [&] {
        if (dst == nullptr || (src == nullptr && n > 0))
          sdk::fail(PG_ERR_INVALID_ARGUMENT, "copy_in_async: NULL");
        dev(d).copy_in_async(queue(s), dst, off, src, n);
      });
    },
    [](pg_device_t d, pg_stream_t s, void* dst, pg_buffer_t src, uint64_t off, uint64_t n,
       pg_error* err) {
      return guard(err, [&] {
        if (src == nullptr || (dst == nullptr && n > 0))
          sdk::fail(PG_ERR_INVALID_ARGUMENT, "copy_out_async: NULL");
        dev(d).copy_out_async(queue(s), dst, src, off, n);
      });
    },
    [](pg_device_t d, pg_stream_t s, pg_program_t p, const pg_launch_args* a, pg_error* err) {
      return guard(err, [&] {
        if (p == nullptr || a == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "launch_async: NULL");
        dev(d).launch_async(queue(s), p, *a);
      });
    },
    [](pg_device_t d, pg_event_t* out, pg_error* err) {
      return guard(err, [&] {
        if (out == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "event_create: out is NULL");
        *out = reinterpret_cast<pg_event_t>(dev(d).event_create());
      });
    },
    [](pg_device_t d, pg_event_t e) {
      if (d != nullptr && e != nullptr) guard(nullptr, [&] { dev(d).event_destroy(event(e)); });
    },
    [](pg_device_t d, pg_event_t e, pg_stream_t s, pg_error* err) {
      return guard(err, [&] { dev(d).event_record(event(e), queue(s)); });
    },
    [](pg_device_t d, pg_stream_t s, pg_event_t e, pg_error* err) {
      return guard(err, [&] { dev(d).stream_wait_event(queue(s), event(e)); });
    },
    [](pg_device_t d, pg_event_t e, pg_error* err) {
      return guard(err, [&] { dev(d).event_synchronize(event(e)); });
    },
    [](pg_device_t d, uint64_t n, void** out, pg_error* err) {
      return guard(err, [&] {
        if (out == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "host_alloc_pinned: out is NULL");
        *out = dev(d).host_alloc_pinned(n);
      });
    },
    [](pg_device_t d, void* host) {
      if (d != nullptr && host != nullptr) guard(nullptr, [&] { dev(d).host_free_pinned(host); });
    },
    [](pg_device_t dst_device, pg_stream_t s, pg_buffer_t dst, uint64_t dst_off,
       pg_device_t src_device, pg_buffer_t src, uint64_t src_off, uint64_t n, pg_error* err) {
      return guard(err, [&] {
        if (dst == nullptr || src == nullptr)
          sdk::fail(PG_ERR_INVALID_ARGUMENT, "copy_peer_async: NULL");
        dev(dst_device).copy_peer_async(queue(s), dst, dst_off, dev(src_device), src, src_off, n);
      });
    },
    // The CUstream, for NCCL (plugins/ccl_nccl) to enqueue on.
    [](pg_device_t, pg_stream_t s) -> void* {
      return s != nullptr ? static_cast<void*>(reinterpret_cast<Queue*>(s)->stream) : nullptr;
    },
};

}  // namespace

const pg_async_api* async_table() {
  return &kAsync;
}

}  // namespace polygrad::cuda
