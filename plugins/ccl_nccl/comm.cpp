#include "comm.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "tcp_store.hpp"

namespace polygrad::ccl_nccl {

namespace {

using Clock = std::chrono::steady_clock;

std::string this_host() {
  char name[65] = {};
  if (gethostname(name, 64) != 0) return "?";
  return name;
}

std::string describe_peer(const Comm& c, int r) {
  const Peer& p = c.peers.at(static_cast<size_t>(r));
  return "rank " + std::to_string(r) + " (pid " + std::to_string(p.pid) + " on " + p.host + ")";
}

/// Whether rank r's process is known to be gone (same host only: its pid left or is a zombie).
bool peer_gone(const Comm& c, int r) {
  const Peer& p = c.peers.at(static_cast<size_t>(r));
  if (p.pid <= 0 || p.host != c.peers.at(static_cast<size_t>(c.rank)).host) return false;
  std::ifstream stat("/proc/" + std::to_string(p.pid) + "/stat");
  if (!stat) return true;
  std::string pid, comm, state;
  stat >> pid >> comm >> state;
  return state == "Z" || state == "X";
}

std::string peers_matching(const Comm& c, bool gone_only) {
  std::string out;
  for (int r = 0; r < c.world_size; ++r)
    if (r != c.rank && (!gone_only || peer_gone(c, r)))
      out += (out.empty() ? "" : ", ") + describe_peer(c, r);
  return out;
}

void check_cuda(CUresult r, const std::string& what) {
  if (r != CUDA_SUCCESS) sdk::fail(PG_ERR_DEVICE, what + ": " + libraries().describe(r));
}

void check_usable(const Comm& c, const char* op) {
  if (c.broken != PG_OK)
    sdk::fail(c.broken, std::string(op) + ": the communicator is broken by an earlier failure: " +
                            c.broken_message);
  if (c.nccl == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string(op) + ": no communicator");
}

/// Marks the communicator broken, aborts the NCCL communicator (its kernels stop waiting and
/// it touches no memory after) and throws.
[[noreturn]] void break_comm(Comm& c, pg_status status, const std::string& message) {
  c.broken = status;
  c.broken_message = message;
  if (c.nccl != nullptr) {
    libraries().ncclCommAbort(c.nccl);
    c.nccl = nullptr;
  }
  sdk::fail(status, message);
}

/// The failure when NCCL reports `r` on `op` (or the stream fails), naming the peers known
/// to be gone.
[[noreturn]] void fail_nccl(Comm& c, ncclResult_t r, const std::string& op) {
  const Libraries& l = libraries();
  std::string message = "rank " + std::to_string(c.rank) + ": " + op + ": " + l.describe(r);
  if (c.nccl != nullptr) {
    const char* last = l.ncclGetLastError(c.nccl);
    if (last != nullptr && last[0] != '\0') message += " (" + std::string(last) + ")";
  }
  const std::string gone = peers_matching(c, true);
  if (!gone.empty()) message += "; peer " + gone + " died";
  const bool peer = r == ncclRemoteError || r == ncclSystemError || !gone.empty();
  if (peer) break_comm(c, PG_ERR_PEER, message);
  sdk::fail(
      r == ncclInvalidArgument || r == ncclInvalidUsage ? PG_ERR_INVALID_ARGUMENT : PG_ERR_DEVICE,
      message);
}

/// Waits until the nonblocking communicator has finished `op`'s enqueueing (and, with
/// `stream`, the stream has run it), polling NCCL's state, the peers on this host and the
/// deadline.
void wait(Comm& c, ncclResult_t started, const std::string& op, CUstream stream) {
  const Libraries& l = libraries();
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(c.timeout_seconds);
  auto next_check = start + std::chrono::milliseconds(20);
  ncclResult_t state = started;
  if (state != ncclSuccess && state != ncclInProgress) fail_nccl(c, state, op);
  for (;;) {
    if (state == ncclInProgress) {
      if (l.ncclCommGetAsyncError(c.nccl, &state) != ncclSuccess) state = ncclInternalError;
      if (state != ncclSuccess && state != ncclInProgress) fail_nccl(c, state, op);
    }
    if (state == ncclSuccess) {
      if (stream == nullptr) return;
      CUresult q = l.cuStreamQuery(stream);
      if (q == CUDA_SUCCESS) return;
      if (q != CUDA_ERROR_NOT_READY)
        break_comm(
            c, PG_ERR_DEVICE,
            "rank " + std::to_string(c.rank) + ": " + op + ": the stream failed: " + l.describe(q));
      // A peer's failure shows as the communicator's asynchronous error.
      ncclResult_t async = ncclSuccess;
      l.ncclCommGetAsyncError(c.nccl, &async);
      if (async != ncclSuccess && async != ncclInProgress) fail_nccl(c, async, op);
    }
    const auto now = Clock::now();
    if (now >= next_check) {
      next_check = now + std::chrono::milliseconds(20);
      const std::string gone = peers_matching(c, true);
      if (!gone.empty())
        break_comm(c, PG_ERR_PEER,
                   "rank " + std::to_string(c.rank) + ": " + op + ": peer " + gone +
                       " died before the collective finished");
    }
    if (now >= deadline) {
      char secs[32];
      std::snprintf(secs, sizeof(secs), "%g", c.timeout_seconds);
      break_comm(c, PG_ERR_TIMEOUT,
                 "rank " + std::to_string(c.rank) + ": " + op + " timed out after " + secs +
                     " s waiting for its peers (" + peers_matching(c, false) +
                     "): one of them is stuck, slow or gone on another host");
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(now - start < std::chrono::seconds(1) ? 20 : 200));
  }
}

/// Makes the communicator's context current on this thread.
void enter(const Comm& c) {
  check_cuda(libraries().cuCtxSetCurrent(c.context), "cuCtxSetCurrent");
}

struct NcclType {
  ncclDataType_t type;
  bool floating;
  uint64_t size;
};

NcclType nccl_type(uint32_t dtype, const char* op) {
  switch (dtype) {
    case PG_DTYPE_INT8:
      return {ncclInt8, false, 1};
    case PG_DTYPE_UINT8:
      return {ncclUint8, false, 1};
    case PG_DTYPE_INT32:
      return {ncclInt32, false, 4};
    case PG_DTYPE_UINT32:
      return {ncclUint32, false, 4};
    case PG_DTYPE_INT64:
      return {ncclInt64, false, 8};
    case PG_DTYPE_UINT64:
      return {ncclUint64, false, 8};
    case PG_DTYPE_FLOAT16:
      return {ncclFloat16, true, 2};
    case PG_DTYPE_BFLOAT16:
      return {ncclBfloat16, true, 2};
    case PG_DTYPE_FLOAT32:
      return {ncclFloat32, true, 4};
    case PG_DTYPE_FLOAT64:
      return {ncclFloat64, true, 8};
    default:
      break;
  }
  sdk::fail(PG_ERR_UNSUPPORTED, std::string(op) + ": NCCL has no dtype " + std::to_string(dtype) +
                                    " (bool, int16 and uint16 are not NCCL types)");
}

ncclRedOp_t nccl_op(uint32_t op, const NcclType& t, const char* name) {
  switch (op) {
    case PG_CCL_SUM:
      return ncclSum;
    case PG_CCL_MAX:
      return ncclMax;
    case PG_CCL_MEAN:
      if (!t.floating)
        sdk::fail(PG_ERR_UNSUPPORTED, std::string(name) + ": mean needs a floating-point dtype");
      return ncclAvg;
    default:
      sdk::fail(PG_ERR_INVALID_ARGUMENT,
                std::string(name) + ": unknown reduction " + std::to_string(op));
  }
}

/// The CUDA address of a pg_ccl_buffer: a buffer of a device plugin that gives device
/// addresses (the cuda plugin), on the communicator's GPU.
CUdeviceptr address_of(const Comm& c, const pg_ccl_buffer* b, const char* what) {
  if (b == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string("the ") + what + " is NULL");
  if (!PG_HAS_FIELD(b, pg_ccl_buffer, offset))
    sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string("the ") + what + "'s struct_size " +
                                           std::to_string(b->struct_size) + " is too small");
  if (b->buffer == nullptr)
    sdk::fail(PG_ERR_UNSUPPORTED,
              std::string("the ") + what +
                  " is host memory: the NCCL plugin works on CUDA device buffers (move the "
                  "tensor to a cuda device, or use the mpi plugin)");
  const pg_plugin* dev = b->device_plugin;
  if (dev == nullptr || dev->allocator == nullptr)
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              std::string("the ") + what + " is a device buffer without its device plugin");
  const pg_allocator_api* a = dev->allocator;
  const std::string plugin = dev->name != nullptr ? dev->name : "?";
  if (!PG_HAS_FIELD(a, pg_allocator_api, device_address) || a->device_address == nullptr)
    sdk::fail(PG_ERR_UNSUPPORTED, std::string("the ") + what + " is a buffer of the " + plugin +
                                      " device plugin, which gives no device address: the NCCL "
                                      "plugin works on CUDA device buffers (use the mpi plugin)");
  uint64_t address = 0;
  pg_error err;
  err.message[0] = '\0';
  if (pg_status s = a->device_address(b->device, b->buffer, &address, &err); s != PG_OK)
    sdk::fail(s, std::string("the ") + what + ": the " + plugin +
                     " device plugin's device_address failed: " + err.message);
  address += b->offset;
  int ordinal = -1;
  CUresult r = libraries().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                                 static_cast<CUdeviceptr>(address));
  if (r != CUDA_SUCCESS)
    sdk::fail(PG_ERR_UNSUPPORTED,
              std::string("the ") + what + " (a buffer of the " + plugin +
                  " device plugin) is not CUDA device memory: " + libraries().describe(r));
  if (ordinal != c.device)
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              std::string("the ") + what + " is on cuda:" + std::to_string(ordinal) +
                  ", the communicator on cuda:" + std::to_string(c.device));
  return static_cast<CUdeviceptr>(address);
}

/// Where a collective runs: the caller's stream as a CUstream when its device plugin gives
/// one (pg_async_api.native_stream), so the collective is ordered after the work enqueued
/// there without the host waiting; else, with a stream, that stream is synchronised through
/// the device plugin and the communicator's own stream is used, as without one.
CUstream stream_for(const Comm& c, const pg_ccl_buffer* b, pg_stream_t stream) {
  if (stream == nullptr) return c.stream;
  const pg_plugin* dev = b->device_plugin;
  const pg_async_api* as =
      PG_HAS_FIELD(dev, pg_plugin, async) ? dev->async : static_cast<const pg_async_api*>(nullptr);
  if (as == nullptr || as->stream_synchronize == nullptr)
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              "a stream was given, but the buffers' device plugin has no streams");
  if (PG_HAS_FIELD(as, pg_async_api, native_stream) && as->native_stream != nullptr) {
    if (void* native = as->native_stream(b->device, stream)) return static_cast<CUstream>(native);
  }
  pg_error err;
  err.message[0] = '\0';
  if (pg_status s = as->stream_synchronize(b->device, stream, &err); s != PG_OK)
    sdk::fail(s, std::string("synchronising the buffers' stream: ") + err.message);
  return c.stream;
}

void* ptr(CUdeviceptr p) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

}  // namespace

int choose_device(int rank, int devices) {
  if (devices <= 0) return 0;
  for (const char* var : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && v[0] != '\0') return std::atoi(v) % devices;
  }
  return rank % devices;
}

/// make_comm's steps after the arguments are checked, on `c` (freed by the caller on failure).
void init_comm(Comm& c, const pg_ccl_bootstrap& b, const std::string& address,
               double timeout_seconds);

Comm* make_comm(const pg_ccl_bootstrap& b, double timeout_seconds) {
  if (b.world_size < 1 || b.rank < 0 || b.rank >= b.world_size)
    sdk::fail(PG_ERR_INVALID_ARGUMENT, "comm_init: rank " + std::to_string(b.rank) +
                                           " is outside a world of " +
                                           std::to_string(b.world_size));
  std::string address = b.address != nullptr ? b.address : "";
  if (address.empty()) address = store_address_from_env();
  if (address.empty() && b.world_size > 1)
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              "comm_init: a world of " + std::to_string(b.world_size) +
                  " ranks meets at a TCP store to exchange the NCCL id: pass an address "
                  "'host:port' (rank 0 listens there) or set MASTER_ADDR and MASTER_PORT, as "
                  "torchrun does");
  if (!address.empty()) parse_store_address(address);  // a malformed one fails before the GPU
  const Libraries& l = libraries();
  if (!l.unusable.empty()) sdk::fail(PG_ERR_UNSUPPORTED, "comm_init: " + l.unusable);

  auto c = std::make_unique<Comm>();
  try {
    init_comm(*c, b, address, timeout_seconds);
  } catch (...) {
    if (c->nccl != nullptr) l.ncclCommAbort(c->nccl);
    c->nccl = nullptr;
    destroy_comm(c.release());
    throw;
  }
  return c.release();
}

void init_comm(Comm& comm, const pg_ccl_bootstrap& b, const std::string& address,
               double timeout_seconds) {
  const Libraries& l = libraries();
  Comm* c = &comm;
  c->rank = b.rank;
  c->world_size = b.world_size;
  c->timeout_seconds = timeout_seconds;
  c->device = choose_device(b.rank, l.devices);
  CUdevice dev = 0;
  check_cuda(l.cuDeviceGet(&dev, c->device), "cuDeviceGet(" + std::to_string(c->device) + ")");
  // The primary context: the one the cuda plugin (and the CUDA runtime inside NCCL) uses.
  check_cuda(l.cuDevicePrimaryCtxRetain(&c->context, dev), "cuDevicePrimaryCtxRetain");
  enter(*c);
  check_cuda(l.cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check_cuda(l.cuMemAlloc_v2(&c->scratch, sizeof(int32_t)), "cuMemAlloc");

  ncclUniqueId id{};
  if (b.rank == 0) {
    if (ncclResult_t r = l.ncclGetUniqueId(&id); r != ncclSuccess)
      sdk::fail(PG_ERR_DEVICE, "comm_init: ncclGetUniqueId failed: " + l.describe(r));
  }
  // Each rank's blob: the id (rank 0's is the one used), then "pid host".
  std::string blob(reinterpret_cast<const char*>(&id), sizeof(id));
  blob += std::to_string(static_cast<long>(::getpid())) + " " + this_host();
  std::vector<std::string> blobs =
      tcp_all_gather(address, b.rank, b.world_size, blob, timeout_seconds);
  c->peers.resize(static_cast<size_t>(b.world_size));
  for (size_t r = 0; r < blobs.size(); ++r) {
    if (blobs[r].size() < sizeof(id))
      sdk::fail(PG_ERR_DEVICE, "comm_init: a malformed store reply");
    const std::string who = blobs[r].substr(sizeof(id));
    const size_t space = who.find(' ');
    c->peers[r].pid = std::atol(who.substr(0, space).c_str());
    c->peers[r].host = space == std::string::npos ? "?" : who.substr(space + 1);
  }
  std::memcpy(&id, blobs[0].data(), sizeof(id));

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every wait is ours, with a deadline
  ncclResult_t started = l.ncclCommInitRankConfig(&c->nccl, b.world_size, id, b.rank, &config);
  if (c->nccl == nullptr)
    sdk::fail(PG_ERR_DEVICE, "comm_init: ncclCommInitRankConfig failed: " + l.describe(started));
  wait(*c, started, "comm_init", nullptr);
  c->transport =
      "NCCL " + nccl_version_text(l.nccl_version) + " on cuda:" + std::to_string(c->device);
}

void destroy_comm(Comm* c) {
  if (c == nullptr) return;
  const Libraries& l = libraries();
  if (c->context != nullptr) l.cuCtxSetCurrent(c->context);
  if (c->nccl != nullptr) l.ncclCommDestroy(c->nccl);
  if (c->stream != nullptr) l.cuStreamDestroy_v2(c->stream);
  if (c->scratch != 0) l.cuMemFree_v2(c->scratch);
  delete c;
}

void all_reduce(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                uint32_t dtype, uint32_t op, pg_stream_t stream) {
  check_usable(c, "all_reduce");
  const NcclType t = nccl_type(dtype, "all_reduce");
  const ncclRedOp_t red = nccl_op(op, t, "all_reduce");
  enter(c);
  const CUdeviceptr s = address_of(c, send, "send buffer");
  const CUdeviceptr r = address_of(c, recv, "receive buffer");
  const CUstream on = stream_for(c, recv, stream);
  if (count == 0) return;
  wait(c, libraries().ncclAllReduce(ptr(s), ptr(r), count, t.type, red, c.nccl, on), "all_reduce",
       on);
}

void broadcast(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
               uint32_t dtype, int32_t root, pg_stream_t stream) {
  check_usable(c, "broadcast");
  if (root < 0 || root >= c.world_size)
    sdk::fail(PG_ERR_INVALID_ARGUMENT, "broadcast: root " + std::to_string(root) +
                                           " is outside a world of " +
                                           std::to_string(c.world_size));
  const NcclType t = nccl_type(dtype, "broadcast");
  enter(c);
  const CUdeviceptr r = address_of(c, recv, "receive buffer");
  const CUdeviceptr s = c.rank == root ? address_of(c, send, "send buffer") : r;
  const CUstream on = stream_for(c, recv, stream);
  if (count == 0) return;
  wait(c, libraries().ncclBroadcast(ptr(s), ptr(r), count, t.type, root, c.nccl, on), "broadcast",
       on);
}

void all_gather(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                uint32_t dtype, pg_stream_t stream) {
  check_usable(c, "all_gather");
  const NcclType t = nccl_type(dtype, "all_gather");
  enter(c);
  const CUdeviceptr s = address_of(c, send, "send buffer");
  const CUdeviceptr r = address_of(c, recv, "receive buffer");
  const CUstream on = stream_for(c, recv, stream);
  if (count == 0) return;
  wait(c, libraries().ncclAllGather(ptr(s), ptr(r), count, t.type, c.nccl, on), "all_gather",
       c.stream);
}

void reduce_scatter(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                    uint32_t dtype, uint32_t op, pg_stream_t stream) {
  check_usable(c, "reduce_scatter");
  const NcclType t = nccl_type(dtype, "reduce_scatter");
  const ncclRedOp_t red = nccl_op(op, t, "reduce_scatter");
  enter(c);
  const CUdeviceptr s = address_of(c, send, "send buffer");
  const CUdeviceptr r = address_of(c, recv, "receive buffer");
  const CUstream on = stream_for(c, recv, stream);
  if (count == 0) return;
  wait(c, libraries().ncclReduceScatter(ptr(s), ptr(r), count, t.type, red, c.nccl, on),
       "reduce_scatter", on);
}

void barrier(Comm& c) {
  check_usable(c, "barrier");
  enter(c);
  // NCCL has no barrier: an all_reduce of one int32 that every rank must join.
  wait(c,
       libraries().ncclAllReduce(ptr(c.scratch), ptr(c.scratch), 1, ncclInt32, ncclSum, c.nccl,
                                 c.stream),
       "barrier", c.stream);
}

}  // namespace polygrad::ccl_nccl
