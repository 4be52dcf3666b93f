// The four suites of the kit and the helpers they share.
#ifndef POLYGRAD_CONFORMANCE_SUITES_HPP
#define POLYGRAD_CONFORMANCE_SUITES_HPP

#include <string>

#include "report.hpp"
#include "session.hpp"

namespace polygrad::conformance::detail {

/// How far the ABI suite got.
enum class AbiVerdict {
  proceed,     ///< device 0 is open: the other suites can run
  no_devices,  ///< the plugin is fine but has no usable device: nothing more to run
  fatal        ///< a host would refuse this plugin: exit code 2
};

/// Entry table, version negotiation, init variants, devices and properties. Opens device 0
/// of `session` on success; `why` says what was fatal.
AbiVerdict run_abi_suite(Session& session, Report& report, std::string& why);
/// alloc/free/copies: sizes, offsets, a 64 MiB buffer, alignment, copy_device, bounds.
void run_allocator_suite(const Session& session, Suite& suite);
/// Every op x declared dtype through the case table; fills the support table.
void run_op_suite(const Session& session, Report& report);
/// Garbage artifacts, malformed programs, bad launches.
void run_error_suite(const Session& session, Suite& suite);
/// Streams, events and pinned memory (plugins with pg_plugin.async, ABI 1.3).
void run_async_suite(const Session& session, Suite& suite);
/// Programs loaded by several threads at once, then run (loaders that declare
/// PG_LOADER_CONCURRENT_LOAD, ABI 1.5).
void run_concurrent_load_suite(const Session& session, Suite& suite);
/// ATOMIC_ADD on every dtype the plugin takes it on (PG_CAP_ATOMIC_ADD, kernel ISA 2).
void run_atomic_suite(const Session& session, Suite& suite);
/// WMMA on every tensor-core shape the device lists (kernel ISA 2).
void run_wmma_suite(const Session& session, Suite& suite);

/// Whether `path` is a ccl plugin (it exports pg_ccl_entry and no pg_plugin_entry).
bool is_ccl_library(const std::string& path);
/// A ccl plugin (ccl.h): "ccl-abi" (table, versions, slots, init, probe), then, when the
/// probe says it can make communicators here and not abi_only, "ccl" (a world of one on host
/// memory). What a host would refuse is a load failure of `report`.
void run_ccl_suites(const std::string& path, bool abi_only, Report& report);

/// Records a pass when `r` is an error status (of `want` when want >= 0) with a message;
/// otherwise a failure that says what came back instead.
void expect_error(Suite& suite, const std::string& check, const CallResult& r, int want = -1);
/// Records a pass when `r` is PG_OK; otherwise a failure naming the status and message.
bool expect_ok(Suite& suite, const std::string& check, const CallResult& r);

}  // namespace polygrad::conformance::detail

#endif  // POLYGRAD_CONFORMANCE_SUITES_HPP
