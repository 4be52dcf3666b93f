// ccl_mpi: the pg_ccl_plugin table. MPI starts at the first comm_init (not at load), each
// communicator is a duplicate of MPI_COMM_WORLD that returns errors instead of aborting, and
// every collective waits with a deadline (peers.cpp).
#include "collectives.hpp"

#include <cstdio>

namespace polygrad::ccl_mpi {

namespace {

/// The plugin's state: the host's services.
struct State {
  const pg_host_services* host = nullptr;
};

/// Seconds a collective waits for its peers when the bootstrap names no timeout.
constexpr double kDefaultTimeout = 60;

Comm& comm_of(pg_ccl_comm_t c) {
  if (c == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "the communicator is NULL");
  return *reinterpret_cast<Comm*>(c);
}

pg_status init(const pg_host_services* host, pg_plugin_state_t* state, pg_error* err) {
  return sdk::detail::firewall(err, "init", [&] {
    auto* s = new State;
    s->host = host;
    *state = reinterpret_cast<pg_plugin_state_t>(s);
  });
}

void shutdown(pg_plugin_state_t state) {
  delete reinterpret_cast<State*>(state);
}

pg_status probe(pg_plugin_state_t, uint32_t* usable, pg_error* err) {
  return sdk::detail::firewall(err, "probe", [&] {
    // A process no launcher started still makes a world of one (an MPI singleton); comm_init
    // refuses a larger world there, saying so.
    *usable = 1;
  });
}

pg_status comm_init(pg_plugin_state_t, const pg_ccl_bootstrap* b, pg_ccl_comm_t* out,
                    pg_error* err) {
  return sdk::detail::firewall(err, "comm_init", [&] {
    if (b == nullptr || !PG_HAS_FIELD(b, pg_ccl_bootstrap, timeout_seconds))
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "comm_init: the bootstrap is NULL or too small");
    if (b->address != nullptr && b->address[0] != '\0')
      sdk::fail(PG_ERR_UNSUPPORTED, std::string("comm_init: the MPI plugin meets through its "
                                                "launcher (mpirun), not at address '") +
                                        b->address + "'");
    std::string why;
    if (!under_launcher(why) && b->world_size > 1)
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "comm_init: a world of " + std::to_string(b->world_size) +
                                             " ranks, but " + why + " (run under mpirun -np " +
                                             std::to_string(b->world_size) + ")");
    const double timeout = b->timeout_seconds > 0 ? b->timeout_seconds : kDefaultTimeout;
    start_mpi(timeout);
    std::lock_guard lock(mpi_mutex());
    auto c = std::make_unique<Comm>();
    c->timeout_seconds = timeout;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->world_size);
    if (c->rank != b->rank || c->world_size != b->world_size)
      sdk::fail(PG_ERR_INVALID_ARGUMENT,
                "comm_init: MPI numbers this process rank " + std::to_string(c->rank) + " of " +
                    std::to_string(c->world_size) + ", but rank " + std::to_string(b->rank) +
                    " of " + std::to_string(b->world_size) + " was asked for");
    try {
      // Both steps are collective: a peer that never comes is a timeout, not a hang.
      c->peers.assign(static_cast<size_t>(c->world_size), Peer{0, "?"});
      MPI_Request request = MPI_REQUEST_NULL;
      if (MPI_Comm_idup(MPI_COMM_WORLD, &c->comm, &request) != MPI_SUCCESS)
        sdk::fail(PG_ERR_DEVICE, "comm_init: MPI_Comm_idup failed");
      wait(*c, request, "comm_init", {});
      MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
      c->peers = exchange_peers(*c);
    } catch (...) {
      if (c->broken != PG_OK) c.release();  // MPI may still use it: never freed
      throw;
    }
    *out = reinterpret_cast<pg_ccl_comm_t>(c.release());
  });
}

void comm_destroy(pg_ccl_comm_t comm) {
  if (comm == nullptr) return;
  auto* c = reinterpret_cast<Comm*>(comm);
  if (c->broken != PG_OK) {
    // A collective of it may still be pending on a dead peer: leave it (and its memory) be.
    return;
  }
  {
    std::lock_guard lock(mpi_mutex());
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&c->comm);
  }
  delete c;
}

pg_status comm_info(pg_ccl_comm_t comm, pg_ccl_comm_info* info, pg_error* err) {
  return sdk::detail::firewall(err, "comm_info", [&] {
    Comm& c = comm_of(comm);
    if (info == nullptr || !PG_HAS_FIELD(info, pg_ccl_comm_info, transport))
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "comm_info: info is NULL or too small");
    info->rank = c.rank;
    info->world_size = c.world_size;
    info->timeout_seconds = c.timeout_seconds;
    std::snprintf(info->transport, sizeof(info->transport), "%s", library_version().c_str());
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
    "mpi",
    POLYGRAD_CCL_MPI_VERSION,
    nullptr,
    0,
    0,
    init,
    shutdown,
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

}  // namespace polygrad::ccl_mpi

extern "C" PG_PLUGIN_EXPORT const pg_ccl_plugin* pg_ccl_entry(void) {
  return &polygrad::ccl_mpi::kTable;
}
