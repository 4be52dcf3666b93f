// ccl_nccl: the pg_ccl_plugin table. NCCL and the CUDA driver are opened at the first probe or
// comm_init (never at load, never linked); the NCCL id goes from rank 0 to the others through a
// TCP store (tcp_store.hpp); the collectives run on CUDA device buffers (comm.hpp).
#include <polygrad/ccl_plugin.hpp>

#include <string>

#include "comm.hpp"

namespace polygrad::ccl_nccl {

namespace {

/// The pg_ccl_plugin entries, in the form sdk::ccl_table reads (ccl_plugin.hpp).
struct NcclCcl {
  using Comm = ccl_nccl::Comm;
  static constexpr const char* kName = "nccl";
  static constexpr const char* kVersion = POLYGRAD_CCL_NCCL_VERSION;

  static std::string unusable() { return libraries().unusable; }
  static Comm* comm_init(const pg_ccl_bootstrap& b, double timeout) {
    return make_comm(b, timeout);
  }
  static void comm_destroy(Comm* c) { destroy_comm(c); }
  static std::string transport(const Comm& c) { return c.transport; }

  static constexpr auto all_reduce = ccl_nccl::all_reduce;
  static constexpr auto broadcast = ccl_nccl::broadcast;
  static constexpr auto all_gather = ccl_nccl::all_gather;
  static constexpr auto reduce_scatter = ccl_nccl::reduce_scatter;
  static constexpr auto barrier = ccl_nccl::barrier;
};

}  // namespace

}  // namespace polygrad::ccl_nccl

extern "C" PG_PLUGIN_EXPORT const pg_ccl_plugin* pg_ccl_entry(void) {
  return polygrad::sdk::ccl_table<polygrad::ccl_nccl::NcclCcl>();
}
