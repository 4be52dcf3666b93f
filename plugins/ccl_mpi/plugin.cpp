// ccl_mpi: the pg_ccl_plugin table. MPI starts at the first comm_init (not at load), each
// communicator is a duplicate of MPI_COMM_WORLD that returns errors instead of aborting, and
// every collective waits with a deadline (peers.cpp).
#include <polygrad/ccl_plugin.hpp>

#include <memory>
#include <string>

#include "collectives.hpp"

namespace polygrad::ccl_mpi {

namespace {

/// The pg_ccl_plugin entries, in the form sdk::ccl_table reads (ccl_plugin.hpp).
struct MpiCcl {
  using Comm = ccl_mpi::Comm;
  static constexpr const char* kName = "mpi";
  static constexpr const char* kVersion = POLYGRAD_CCL_MPI_VERSION;

  static std::string unusable() {
    // A process no launcher started still makes a world of one (an MPI singleton); comm_init
    // refuses a larger world there, saying so.
    return "";
  }

  static Comm* comm_init(const pg_ccl_bootstrap& b, double timeout) {
    if (b.address != nullptr && b.address[0] != '\0')
      sdk::fail(PG_ERR_UNSUPPORTED, std::string("comm_init: the MPI plugin meets through its "
                                                "launcher (mpirun), not at address '") +
                                        b.address + "'");
    std::string why;
    if (!under_launcher(why) && b.world_size > 1)
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "comm_init: a world of " + std::to_string(b.world_size) +
                                             " ranks, but " + why + " (run under mpirun -np " +
                                             std::to_string(b.world_size) + ")");
    start_mpi(timeout);
    std::lock_guard lock(mpi_mutex());
    auto c = std::make_unique<Comm>();
    c->timeout_seconds = timeout;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->world_size);
    if (c->rank != b.rank || c->world_size != b.world_size)
      sdk::fail(PG_ERR_INVALID_ARGUMENT,
                "comm_init: MPI numbers this process rank " + std::to_string(c->rank) + " of " +
                    std::to_string(c->world_size) + ", but rank " + std::to_string(b.rank) +
                    " of " + std::to_string(b.world_size) + " was asked for");
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
    return c.release();
  }

  static void comm_destroy(Comm* c) {
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

  static std::string transport(const Comm&) { return library_version(); }

  static constexpr auto all_reduce = ccl_mpi::all_reduce;
  static constexpr auto broadcast = ccl_mpi::broadcast;
  static constexpr auto all_gather = ccl_mpi::all_gather;
  static constexpr auto reduce_scatter = ccl_mpi::reduce_scatter;
  static constexpr auto barrier = ccl_mpi::barrier;
};

}  // namespace

}  // namespace polygrad::ccl_mpi

extern "C" PG_PLUGIN_EXPORT const pg_ccl_plugin* pg_ccl_entry(void) {
  return polygrad::sdk::ccl_table<polygrad::ccl_mpi::MpiCcl>();
}
