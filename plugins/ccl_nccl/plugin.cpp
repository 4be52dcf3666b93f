// ccl_nccl: the pg_ccl_plugin table. NCCL and the CUDA driver are opened at the first probe or
// comm_init (never at load, never linked); the NCCL id goes from rank 0 to the others through a
// TCP store (tcp_store.hpp); the collectives run on CUDA device buffers (comm.hpp).
#include <cstdio>

#include "comm.hpp"

namespace polygrad::ccl_nccl {

namespace {

/// Seconds a collective waits for its peers when the bootstrap names no timeout.
constexpr double kDefaultTimeout = 60;

Comm& comm_of(pg_ccl_comm_t c) {
  if (c == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "the communicator is NULL");
  return *reinterpret_cast<Comm*>(c);
}

pg_status init(const pg_host_services*, pg_plugin_state_t* state, pg_error* err) {
  return sdk::detail::firewall(err, "init", [&] {
    static int token = 0;  // no state of its own: the libraries are process-wide
    *state = reinterpret_cast<pg_plugin_state_t>(&token);
  });
}

pg_status probe(pg_plugin_state_t, uint32_t* usable, pg_error* err) {
  return sdk::detail::firewall(err, "probe", [&] {
    const Libraries& l = libraries();
    *usable = l.unusable.empty() ? 1 : 0;
    // Not usable is an answer, not a failure: the reason goes to the load report.
    if (!l.unusable.empty()) sdk::set_error(err, l.unusable.c_str());
  });
}

pg_status comm_init(pg_plugin_state_t, const pg_ccl_bootstrap* b, pg_ccl_comm_t* out,
                    pg_error* err) {
  return sdk::detail::firewall(err, "comm_init", [&] {
    if (b == nullptr || !PG_HAS_FIELD(b, pg_ccl_bootstrap, timeout_seconds))
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "comm_init: the bootstrap is NULL or too small");
    if (out == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "comm_init: out is NULL");
    const double timeout = b->timeout_seconds > 0 ? b->timeout_seconds : kDefaultTimeout;
    *out = reinterpret_cast<pg_ccl_comm_t>(make_comm(*b, timeout));
  });
}

void comm_destroy(pg_ccl_comm_t comm) {
  destroy_comm(reinterpret_cast<Comm*>(comm));
}

pg_status comm_info(pg_ccl_comm_t comm, pg_ccl_comm_info* info, pg_error* err) {
  return sdk::detail::firewall(err, "comm_info", [&] {
    Comm& c = comm_of(comm);
    if (info == nullptr || !PG_HAS_FIELD(info, pg_ccl_comm_info, transport))
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "comm_info: info is NULL or too small");
    info->rank = c.rank;
    info->world_size = c.world_size;
    info->timeout_seconds = c.timeout_seconds;
    std::snprintf(info->transport, sizeof(info->transport), "%s", c.transport.c_str());
  });
}

pg_status all_reduce_entry(pg_ccl_comm_t comm, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
                           uint64_t count, uint32_t dtype, uint32_t op, pg_stream_t stream,
                           pg_error* err) {
  return sdk::detail::firewall(
      err, "all_reduce", [&] { all_reduce(comm_of(comm), send, recv, count, dtype, op, stream); });
}

pg_status broadcast_entry(pg_ccl_comm_t comm, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
                          uint64_t count, uint32_t dtype, int32_t root, pg_stream_t stream,
                          pg_error* err) {
  return sdk::detail::firewall(
      err, "broadcast", [&] { broadcast(comm_of(comm), send, recv, count, dtype, root, stream); });
}

pg_status all_gather_entry(pg_ccl_comm_t comm, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
                           uint64_t count, uint32_t dtype, pg_stream_t stream, pg_error* err) {
  return sdk::detail::firewall(
      err, "all_gather", [&] { all_gather(comm_of(comm), send, recv, count, dtype, stream); });
}

pg_status reduce_scatter_entry(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                               const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype,
                               uint32_t op, pg_stream_t stream, pg_error* err) {
  return sdk::detail::firewall(err, "reduce_scatter", [&] {
    reduce_scatter(comm_of(comm), send, recv, count, dtype, op, stream);
  });
}

pg_status barrier_entry(pg_ccl_comm_t comm, pg_error* err) {
  return sdk::detail::firewall(err, "barrier", [&] { barrier(comm_of(comm)); });
}

const pg_ccl_plugin kTable = {
    PG_CCL_ABI_MAJOR,
    PG_CCL_ABI_MINOR,
    sizeof(pg_ccl_plugin),
    0,
    "nccl",
    POLYGRAD_CCL_NCCL_VERSION,
    nullptr,
    0,
    0,
    init,
    nullptr,
    probe,
    comm_init,
    comm_destroy,
    comm_info,
    all_reduce_entry,
    broadcast_entry,
    all_gather_entry,
    reduce_scatter_entry,
    barrier_entry,
};

}  // namespace

}  // namespace polygrad::ccl_nccl

extern "C" PG_PLUGIN_EXPORT const pg_ccl_plugin* pg_ccl_entry(void) {
  return &polygrad::ccl_nccl::kTable;
}
