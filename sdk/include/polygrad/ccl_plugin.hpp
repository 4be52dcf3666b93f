// polygrad plugin SDK: the pg_ccl_plugin table (ccl.h) built from a C++ class, every entry
// behind the firewall (a C++ exception becomes a pg_status and a message; none crosses into the
// host), the argument checks every ccl plugin needs done once here.
//
//   struct MyComm { int rank = 0, world_size = 1; double timeout_seconds = 60; ... };
//   struct MyCcl {
//     using Comm = MyComm;
//     static constexpr const char* kName = "my";           // polygrad_ccl_my.so
//     static constexpr const char* kVersion = "0.1.0";
//     static std::string unusable();                        // "" or why not (probe's reason)
//     static Comm* comm_init(const pg_ccl_bootstrap& b, double timeout_seconds);
//     static void comm_destroy(Comm* c);                    // never NULL
//     static std::string transport(const Comm& c);          // "MPI 4.1 ...", comm_info's name
//     static void all_reduce(Comm&, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
//                            uint64_t count, uint32_t dtype, uint32_t op, pg_stream_t stream);
//     static void broadcast(Comm&, send, recv, count, dtype, int32_t root, stream);
//     static void all_gather(Comm&, send, recv, count, dtype, stream);
//     static void reduce_scatter(Comm&, send, recv, count, dtype, op, stream);
//     static void barrier(Comm&);
//   };
//   extern "C" PG_PLUGIN_EXPORT const pg_ccl_plugin* pg_ccl_entry(void) {
//     return polygrad::sdk::ccl_table<MyCcl>();
//   }
//
// Failures are thrown as sdk::Error (sdk::fail). The table checks: a NULL communicator, a
// bootstrap or comm_info record too small for the fields it reads, a NULL comm_init output.
// A timeout of 0 in the bootstrap means `Impl::kDefaultTimeout` seconds when Impl has one, 60
// otherwise. The plugin keeps no state of its own in the host's state slot (ccl plugins are
// process-wide: a transport starts once per process).
#ifndef POLYGRAD_CCL_PLUGIN_HPP
#define POLYGRAD_CCL_PLUGIN_HPP

#include <polygrad/ccl.h>
#include <polygrad/plugin_error.hpp>

#include <cstdio>
#include <string>

namespace polygrad::sdk {

namespace ccl_detail {

template <class Impl>
typename Impl::Comm& comm_of(pg_ccl_comm_t c) {
  if (c == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "the communicator is NULL");
  return *reinterpret_cast<typename Impl::Comm*>(c);
}

template <class Impl>
constexpr double default_timeout() {
  if constexpr (requires { Impl::kDefaultTimeout; })
    return Impl::kDefaultTimeout;
  else
    return 60;
}

template <class Impl>
struct Entries {
  using Comm = typename Impl::Comm;

  static pg_status init(const pg_host_services*, pg_plugin_state_t* state, pg_error* err) {
    return detail::firewall(err, "init", [&] {
      static int token = 0;  // no state: the transport is process-wide
      *state = reinterpret_cast<pg_plugin_state_t>(&token);
    });
  }

  static pg_status probe(pg_plugin_state_t, uint32_t* usable, pg_error* err) {
    return detail::firewall(err, "probe", [&] {
      const std::string why = Impl::unusable();
      *usable = why.empty() ? 1 : 0;
      // Not usable is an answer, not a failure: the reason goes to the load report.
      if (!why.empty()) set_error(err, why.c_str());
    });
  }

  static pg_status comm_init(pg_plugin_state_t, const pg_ccl_bootstrap* b, pg_ccl_comm_t* out,
                             pg_error* err) {
    return detail::firewall(err, "comm_init", [&] {
      if (b == nullptr || !PG_HAS_FIELD(b, pg_ccl_bootstrap, timeout_seconds))
        fail(PG_ERR_INVALID_ARGUMENT, "comm_init: the bootstrap is NULL or too small");
      if (out == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "comm_init: out is NULL");
      const double timeout = b->timeout_seconds > 0 ? b->timeout_seconds : default_timeout<Impl>();
      *out = reinterpret_cast<pg_ccl_comm_t>(Impl::comm_init(*b, timeout));
    });
  }

  static void comm_destroy(pg_ccl_comm_t comm) {
    if (comm == nullptr) return;
    // (No status to report through: a failure here is the plugin's to swallow.)
    (void)detail::firewall(nullptr, "comm_destroy",
                           [&] { Impl::comm_destroy(reinterpret_cast<Comm*>(comm)); });
  }

  static pg_status comm_info(pg_ccl_comm_t comm, pg_ccl_comm_info* info, pg_error* err) {
    return detail::firewall(err, "comm_info", [&] {
      Comm& c = comm_of<Impl>(comm);
      if (info == nullptr || !PG_HAS_FIELD(info, pg_ccl_comm_info, transport))
        fail(PG_ERR_INVALID_ARGUMENT, "comm_info: info is NULL or too small");
      info->rank = c.rank;
      info->world_size = c.world_size;
      info->timeout_seconds = c.timeout_seconds;
      std::snprintf(info->transport, sizeof(info->transport), "%s", Impl::transport(c).c_str());
    });
  }

  static pg_status all_reduce(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                              const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype,
                              uint32_t op, pg_stream_t stream, pg_error* err) {
    return detail::firewall(err, "all_reduce", [&] {
      Impl::all_reduce(comm_of<Impl>(comm), send, recv, count, dtype, op, stream);
    });
  }

  static pg_status broadcast(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                             const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype,
                             int32_t root, pg_stream_t stream, pg_error* err) {
    return detail::firewall(err, "broadcast", [&] {
      Impl::broadcast(comm_of<Impl>(comm), send, recv, count, dtype, root, stream);
    });
  }

  static pg_status all_gather(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                              const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype,
                              pg_stream_t stream, pg_error* err) {
    return detail::firewall(err, "all_gather", [&] {
      Impl::all_gather(comm_of<Impl>(comm), send, recv, count, dtype, stream);
    });
  }

  static pg_status reduce_scatter(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                                  const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype,
                                  uint32_t op, pg_stream_t stream, pg_error* err) {
    return detail::firewall(err, "reduce_scatter", [&] {
      Impl::reduce_scatter(comm_of<Impl>(comm), send, recv, count, dtype, op, stream);
    });
  }

  static pg_status barrier(pg_ccl_comm_t comm, pg_error* err) {
    return detail::firewall(err, "barrier", [&] { Impl::barrier(comm_of<Impl>(comm)); });
  }
};

}  // namespace ccl_detail

/// The plugin's table (a static of this template instance), for `pg_ccl_entry` to return. An
/// option schema (ccl.<name> keys) comes from `Impl::kOptions` and `Impl::kOptionCount` when
/// Impl has them.
template <class Impl>
const pg_ccl_plugin* ccl_table() {
  using E = ccl_detail::Entries<Impl>;
  const pg_option_desc* options = nullptr;
  uint32_t option_count = 0;
  if constexpr (requires { Impl::kOptions; }) {
    options = Impl::kOptions;
    option_count = Impl::kOptionCount;
  }
  static const pg_ccl_plugin table = {
      PG_CCL_ABI_MAJOR,
      PG_CCL_ABI_MINOR,
      sizeof(pg_ccl_plugin),
      0,
      Impl::kName,
      Impl::kVersion,
      options,
      option_count,
      0,
      E::init,
      nullptr,
      E::probe,
      E::comm_init,
      E::comm_destroy,
      E::comm_info,
      E::all_reduce,
      E::broadcast,
      E::all_gather,
      E::reduce_scatter,
      E::barrier,
  };
  return &table;
}

}  // namespace polygrad::sdk

#endif  // POLYGRAD_CCL_PLUGIN_HPP
