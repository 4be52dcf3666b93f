// The NCCL plugin where there is no GPU: it loads (zero communicators) with a one-line reason in
// the load report, the host refuses to make a communicator with that reason, and the plugin's
// own comm_init fails with a clear error: a missing TCP store address names MASTER_ADDR, a
// malformed one is refused, and a well-formed one reaches the missing driver.
// The toolkit's stub driver stands in for the machine's driver (POLYGRAD_CUDA_DRIVER), so the
// results are the same on every machine with the toolkit.
#include <polygrad/ccl.h>
#include <polygrad/ccl.hpp>
#include <polygrad/conformance.hpp>
#include <polygrad/registry.hpp>

#include <dlfcn.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace polygrad {
namespace {

void use_stub_driver() {
  static bool done = [] {
    ::setenv("POLYGRAD_CUDA_DRIVER", PG_TEST_CUDA_STUB, 1);
    return true;
  }();
  (void)done;
}

Registry& registry() {
  use_stub_driver();
  static bool added = [] {
    Registry::global().add_plugin_path(PG_TEST_NCCL_PLUGIN);
    return true;
  }();
  (void)added;
  return Registry::global();
}

const pg_ccl_plugin* table() {
  use_stub_driver();
  void* lib = ::dlopen(PG_TEST_NCCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return nullptr;
  auto entry = reinterpret_cast<pg_ccl_entry_fn>(::dlsym(lib, PG_CCL_ENTRY_NAME));
  return entry != nullptr ? entry() : nullptr;
}

/// comm_init straight through the plugin's table: the status and the message.
std::pair<pg_status, std::string> comm_init(int rank, int world, const char* address) {
  const pg_ccl_plugin* t = table();
  if (t == nullptr) return {PG_ERR_INTERNAL, "cannot open " PG_TEST_NCCL_PLUGIN};
  pg_plugin_state_t state = nullptr;
  pg_error err;
  err.message[0] = '\0';
  if (pg_status s = t->init(nullptr, &state, &err); s != PG_OK) return {s, err.message};
  pg_ccl_bootstrap b{};
  b.struct_size = sizeof(b);
  b.rank = rank;
  b.world_size = world;
  b.address = address;
  b.timeout_seconds = 2;
  pg_ccl_comm_t comm = nullptr;
  pg_status s = t->comm_init(state, &b, &comm, &err);
  if (s == PG_OK) t->comm_destroy(comm);
  return {s, s == PG_OK ? std::string() : std::string(err.message)};
}

TEST(NcclPlugin, LoadsWithZeroCommunicatorsAndAOneLineReason) {
  LoadReport report = registry().report();
  const LoadRecord* rec = nullptr;
  for (const LoadRecord& r : report.records)
    if (r.path.find("polygrad_ccl_nccl.so") != std::string::npos) rec = &r;
  ASSERT_NE(rec, nullptr) << format_report(report);
  EXPECT_TRUE(rec->loaded()) << format_record(*rec);
  EXPECT_EQ(rec->kind, PluginKind::ccl);
  EXPECT_EQ(rec->plugin_name, "nccl");
  EXPECT_EQ(rec->device_count, 0);
  EXPECT_EQ(rec->reason, "no CUDA device: cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
  const std::string line = format_record(*rec);
  EXPECT_NE(line.find("ccl nccl "), std::string::npos) << line;
  EXPECT_NE(line.find(": unusable: no CUDA device: cuInit failed: CUDA_ERROR_STUB_LIBRARY"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

TEST(NcclPlugin, HostRefusesACommunicatorWithTheReason) {
  Bootstrap b;
  b.timeout_seconds = 2;
  try {
    registry().communicator("nccl", b);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << e.what();
  }
}

TEST(NcclPlugin, CommInitWithoutAStoreNamesTheVariables) {
  ::unsetenv("MASTER_ADDR");
  ::unsetenv("MASTER_PORT");
  auto [status, message] = comm_init(0, 2, "");
  EXPECT_EQ(status, PG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("a world of 2 ranks meets at a TCP store"), std::string::npos) << message;
  EXPECT_NE(message.find("set MASTER_ADDR and MASTER_PORT"), std::string::npos) << message;
}

TEST(NcclPlugin, CommInitRefusesAMalformedAddressAndARankOutsideTheWorld) {
  auto [status, message] = comm_init(0, 2, "localhost");
  EXPECT_EQ(status, PG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("tcp store address 'localhost' is not host:port"), std::string::npos)
      << message;
  auto [status2, message2] = comm_init(2, 2, "127.0.0.1:29500");
  EXPECT_EQ(status2, PG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message2.find("rank 2 is outside a world of 2"), std::string::npos) << message2;
}

TEST(NcclPlugin, CommInitWithoutAGpuSaysWhy) {
  // A world of one needs no store: the first thing missing is the device.
  auto [status, message] = comm_init(0, 1, "");
  EXPECT_EQ(status, PG_ERR_UNSUPPORTED);
  EXPECT_EQ(message, "comm_init: no CUDA device: cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
}

TEST(NcclPlugin, ConformanceKitChecksTheTableAndSkipsTheWorldOfOne) {
  use_stub_driver();
  conformance::Options options;
  options.plugin_path = PG_TEST_NCCL_PLUGIN;
  options.verbose = true;
  std::ostringstream out;
  EXPECT_EQ(conformance::run(options, out), 0) << out.str();
  const std::string report = out.str();
  EXPECT_NE(report.find("unusable here: no CUDA device: cuInit failed: CUDA_ERROR_STUB_LIBRARY"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("the plugin cannot make communicators here"), std::string::npos) << report;
}

}  // namespace
}  // namespace polygrad
