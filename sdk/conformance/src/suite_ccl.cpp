// The ccl suites: a collective-communication plugin (ccl.h) checked the way the host loads it
// (the entry table, versions, slots, init and probe: "ccl-abi"), then, when its probe says it
// can make communicators here, a world of one on host memory ("ccl"): every collective
// returns the input bit for bit, writes nothing past its count, honours offsets and works in
// place, and refuses an unknown dtype or reduction, mean of integers, a root outside the world
// and a NULL communicator with an error and a message.
#include <polygrad/ccl.h>

#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <vector>

#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

const pg_host_services* host_services(const std::string& path) {
  static std::string kept;
  static pg_host_services host{};
  kept = path;
  host.struct_size = sizeof(host);
  host.abi_major = PG_PLUGIN_ABI_MAJOR;
  host.abi_minor = PG_PLUGIN_ABI_MINOR;
  host.plugin_path = kept.c_str();
  return &host;
}

/// sizeof(pg_ccl_plugin) of CCL ABI 1.0: up to and including `barrier`.
constexpr size_t kTable10 = offsetof(pg_ccl_plugin, barrier) + sizeof(void*);

pg_ccl_buffer host_buffer(void* memory, uint64_t offset = 0) {
  pg_ccl_buffer b{};
  b.struct_size = sizeof(b);
  b.host = memory;
  b.offset = offset;
  return b;
}

/// One collective on host memory of a world of one: `send` holds `count` elements of
/// `dtype` at `send_offset`; the result must be those bytes at `recv_offset` of a receive
/// area whose other bytes stay as they were.
struct Case {
  std::string name;
  uint32_t dtype;
  uint64_t count;
  uint64_t send_offset = 0, recv_offset = 0;
  bool in_place = false;
  std::function<pg_status(const pg_ccl_buffer*, const pg_ccl_buffer*, pg_error*)> call;
};

uint64_t dtype_bytes(uint32_t dtype) {
  return dtype == PG_DTYPE_FLOAT64 ? 8 : 4;  // the cases use float32, int32 and float64
}

void run_case(Suite& suite, const Case& c) {
  const uint64_t bytes = c.count * dtype_bytes(c.dtype);
  const uint64_t area = bytes + 64;
  std::vector<unsigned char> send(area), recv(area);
  for (uint64_t i = 0; i < area; ++i) {
    send[i] = static_cast<unsigned char>((i * 37 + 11) & 0xff);
    recv[i] = 0xA5;  // canary
  }
  if (c.dtype != PG_DTYPE_INT32) {
    // Finite values only: NaN payloads may not survive a reduction bit for bit.
    for (uint64_t i = 0; i < c.count; ++i) {
      if (c.dtype == PG_DTYPE_FLOAT32) {
        float v = static_cast<float>(i) * 0.5f - 3.25f;
        std::memcpy(&send[c.send_offset + i * 4], &v, 4);
      } else {
        double v = static_cast<double>(i) * -0.75 + 1.0e10;
        std::memcpy(&send[c.send_offset + i * 8], &v, 8);
      }
    }
  }
  const std::vector<unsigned char> original = send;
  pg_ccl_buffer s = host_buffer(send.data(), c.send_offset);
  pg_ccl_buffer r = c.in_place ? s : host_buffer(recv.data(), c.recv_offset);
  CallResult res = guarded([&](pg_error* err) { return c.call(&s, &r, err); });
  if (!res.threw && res.status == PG_ERR_UNSUPPORTED) {
    suite.skip(c.name, "unsupported: " + res.message);
    return;
  }
  if (!expect_ok(suite, c.name + " returns PG_OK", res)) return;
  const unsigned char* got = c.in_place ? send.data() + c.send_offset : recv.data() + c.recv_offset;
  const bool same = std::memcmp(got, original.data() + c.send_offset, bytes) == 0;
  suite.expect(same, c.name + " gives the input bit for bit (a world of one)",
               "the result differs from the input");
  if (c.in_place) {
    const bool rest =
        std::memcmp(send.data(), original.data(), c.send_offset) == 0 &&
        std::memcmp(send.data() + c.send_offset + bytes, original.data() + c.send_offset + bytes,
                    area - c.send_offset - bytes) == 0;
    suite.expect(rest, c.name + " writes only its elements", "bytes around the data changed");
    return;
  }
  bool canary = true;
  for (uint64_t i = 0; i < area; ++i)
    if ((i < c.recv_offset || i >= c.recv_offset + bytes) && recv[i] != 0xA5) canary = false;
  suite.expect(canary, c.name + " writes only its elements",
               "bytes before or past the receive range changed");
  suite.expect(send == original, c.name + " leaves the send buffer as it was",
               "the send buffer changed");
}

}  // namespace

bool is_ccl_library(const std::string& path) {
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return false;  // the device suites report the dlopen error
  return ::dlsym(lib, PG_CCL_ENTRY_NAME) != nullptr &&
         ::dlsym(lib, PG_PLUGIN_ENTRY_NAME) == nullptr;
}

void run_ccl_suites(const std::string& path, bool abi_only, Report& report) {
  Suite& abi = report.suite("ccl-abi");
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  auto entry = lib ? reinterpret_cast<pg_ccl_entry_fn>(::dlsym(lib, PG_CCL_ENTRY_NAME)) : nullptr;
  const pg_ccl_plugin* t = entry ? entry() : nullptr;
  if (t == nullptr) {
    report.set_load_failure(std::string(PG_CCL_ENTRY_NAME) + " returned NULL");
    return;
  }
  auto text = [](const char* s) { return s ? std::string(s) : std::string("?"); };
  report.set_plugin(path, "ccl " + text(t->name) + " " + text(t->version) + " (CCL ABI " +
                              std::to_string(t->abi_major) + "." + std::to_string(t->abi_minor) +
                              ")");
  if (t->abi_major != PG_CCL_ABI_MAJOR) {
    report.set_load_failure("plugin CCL ABI major " + std::to_string(t->abi_major) +
                            ", the kit speaks " + std::to_string(PG_CCL_ABI_MAJOR));
    return;
  }
  if (t->abi_minor > PG_CCL_ABI_MINOR) {
    report.set_load_failure("plugin CCL ABI minor " + std::to_string(t->abi_minor) +
                            " is newer than the kit's " + std::to_string(PG_CCL_ABI_MINOR));
    return;
  }
  abi.pass("version " + std::to_string(t->abi_major) + "." + std::to_string(t->abi_minor));
  if (!abi.expect(
          t->struct_size >= kTable10, "struct_size covers CCL ABI 1.0",
          "struct_size " + std::to_string(t->struct_size) + " < " + std::to_string(kTable10))) {
    report.set_load_failure("the table is smaller than CCL ABI 1.0's");
    return;
  }
  abi.expect(
      t->name != nullptr && t->name[0] != '\0' && t->version != nullptr && t->version[0] != '\0',
      "name and version", "name or version is NULL or empty");
  bool schema = t->option_count == 0 || t->options != nullptr;
  for (uint32_t k = 0; schema && k < t->option_count; ++k)
    schema = t->options[k].key != nullptr && t->options[k].key[0] != '\0';
  abi.expect(schema, "option schema", "options is NULL with option_count > 0, or a key is empty");
  std::string missing;
  auto need = [&](const void* slot, const char* name) {
    if (slot == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  need(reinterpret_cast<const void*>(t->init), "init");
  need(reinterpret_cast<const void*>(t->probe), "probe");
  need(reinterpret_cast<const void*>(t->comm_init), "comm_init");
  need(reinterpret_cast<const void*>(t->comm_destroy), "comm_destroy");
  need(reinterpret_cast<const void*>(t->comm_info), "comm_info");
  need(reinterpret_cast<const void*>(t->all_reduce), "all_reduce");
  need(reinterpret_cast<const void*>(t->broadcast), "broadcast");
  need(reinterpret_cast<const void*>(t->all_gather), "all_gather");
  need(reinterpret_cast<const void*>(t->reduce_scatter), "reduce_scatter");
  need(reinterpret_cast<const void*>(t->barrier), "barrier");
  if (!missing.empty()) {
    abi.fail("required slots", "NULL: " + missing);
    report.set_load_failure("required slots are NULL: " + missing);
    return;
  }
  abi.pass("required slots");

  pg_plugin_state_t state = nullptr;
  CallResult init =
      guarded([&](pg_error* err) { return t->init(host_services(path), &state, err); });
  if (!expect_ok(abi, "init", init)) {
    report.set_load_failure("init failed: " + init.describe());
    return;
  }
  uint32_t usable = 7;
  std::string probe_reason;
  CallResult probe = guarded([&](pg_error* err) {
    err->message[0] = '\0';
    pg_status s = t->probe(state, &usable, err);
    // The reason of an unusable plugin comes back in the message of a PG_OK call.
    if (s == PG_OK && usable == 0) probe_reason = err->message;
    return s;
  });
  expect_ok(abi, "probe", probe);
  abi.expect(usable == 0 || usable == 1, "probe answers 0 or 1",
             "usable = " + std::to_string(usable));
  if (usable == 0) {
    const bool one_line = !probe_reason.empty() && probe_reason.find('\n') == std::string::npos;
    abi.expect(one_line, "an unusable plugin says why in one line",
               "the reason is empty or spans lines: '" + probe_reason + "'");
    abi.set_note("unusable here: " + probe_reason);
  }
  if (abi_only || usable != 1) {
    if (usable != 1)
      report.suite("ccl").skip("world of one", "the plugin cannot make communicators here");
    if (t->shutdown != nullptr) t->shutdown(state);
    return;
  }

  Suite& suite = report.suite("ccl");
  suite.set_note("a world of one on host memory: every collective returns its input");
  pg_ccl_bootstrap b{};
  b.struct_size = sizeof(b);
  b.rank = 1;
  b.world_size = 1;
  b.address = "";
  b.timeout_seconds = 10;
  pg_ccl_comm_t bad = nullptr;
  CallResult outside = guarded([&](pg_error* err) { return t->comm_init(state, &b, &bad, err); });
  expect_error(suite, "comm_init refuses rank 1 of a world of one", outside);
  if (outside.ok()) t->comm_destroy(bad);
  b.rank = 0;
  pg_ccl_comm_t comm = nullptr;
  if (!expect_ok(suite, "comm_init: a world of one",
                 guarded([&](pg_error* err) { return t->comm_init(state, &b, &comm, err); }))) {
    if (t->shutdown != nullptr) t->shutdown(state);
    return;
  }
  pg_ccl_comm_info info{};
  info.struct_size = sizeof(info);
  if (expect_ok(suite, "comm_info",
                guarded([&](pg_error* err) { return t->comm_info(comm, &info, err); }))) {
    const bool terminated = std::memchr(info.transport, '\0', sizeof(info.transport)) != nullptr;
    suite.expect(info.rank == 0 && info.world_size == 1, "comm_info: rank 0 of 1",
                 "rank " + std::to_string(info.rank) + " of " + std::to_string(info.world_size));
    suite.expect(info.timeout_seconds == 10, "comm_info: the timeout asked for",
                 std::to_string(info.timeout_seconds));
    suite.expect(terminated && info.transport[0] != '\0', "comm_info: a transport name",
                 "transport is empty or not terminated");
  }

  const uint64_t n = 1000;
  std::vector<Case> cases;
  for (uint32_t op : {PG_CCL_SUM, PG_CCL_MAX, PG_CCL_MEAN}) {
    static const char* const kOps[] = {"sum", "max", "mean"};
    cases.push_back({std::string("all_reduce ") + kOps[op] + " float32", PG_DTYPE_FLOAT32, n, 0, 0,
                     false, [&, op](auto* s, auto* r, pg_error* e) {
                       return t->all_reduce(comm, s, r, n, PG_DTYPE_FLOAT32, op, nullptr, e);
                     }});
  }
  cases.push_back(
      {"all_reduce sum int32", PG_DTYPE_INT32, n, 0, 0, false, [&](auto* s, auto* r, pg_error* e) {
         return t->all_reduce(comm, s, r, n, PG_DTYPE_INT32, PG_CCL_SUM, nullptr, e);
       }});
  cases.push_back({"all_reduce max float64 at offsets", PG_DTYPE_FLOAT64, n, 24, 8, false,
                   [&](auto* s, auto* r, pg_error* e) {
                     return t->all_reduce(comm, s, r, n, PG_DTYPE_FLOAT64, PG_CCL_MAX, nullptr, e);
                   }});
  cases.push_back({"all_reduce sum float32 in place", PG_DTYPE_FLOAT32, n, 16, 16, true,
                   [&](auto* s, auto* r, pg_error* e) {
                     return t->all_reduce(comm, s, r, n, PG_DTYPE_FLOAT32, PG_CCL_SUM, nullptr, e);
                   }});
  // (A mean in place: the plugin may copy out of a scratch buffer and divide in one pass.)
  for (uint32_t dtype : {PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64})
    cases.push_back({std::string("all_reduce mean ") +
                         (dtype == PG_DTYPE_FLOAT32 ? "float32" : "float64") + " in place",
                     dtype, n, 8, 8, true, [&, dtype](auto* s, auto* r, pg_error* e) {
                       return t->all_reduce(comm, s, r, n, dtype, PG_CCL_MEAN, nullptr, e);
                     }});
  cases.push_back({"broadcast from rank 0", PG_DTYPE_INT32, n, 4, 12, false,
                   [&](auto* s, auto* r, pg_error* e) {
                     return t->broadcast(comm, s, r, n, PG_DTYPE_INT32, 0, nullptr, e);
                   }});
  cases.push_back(
      {"all_gather", PG_DTYPE_FLOAT32, n, 0, 4, false, [&](auto* s, auto* r, pg_error* e) {
         return t->all_gather(comm, s, r, n, PG_DTYPE_FLOAT32, nullptr, e);
       }});
  cases.push_back(
      {"reduce_scatter sum", PG_DTYPE_FLOAT32, n, 8, 0, false, [&](auto* s, auto* r, pg_error* e) {
         return t->reduce_scatter(comm, s, r, n, PG_DTYPE_FLOAT32, PG_CCL_SUM, nullptr, e);
       }});
  cases.push_back({"all_reduce of 0 elements", PG_DTYPE_FLOAT32, 0, 0, 0, false,
                   [&](auto* s, auto* r, pg_error* e) {
                     return t->all_reduce(comm, s, r, 0, PG_DTYPE_FLOAT32, PG_CCL_SUM, nullptr, e);
                   }});
  for (const Case& c : cases) run_case(suite, c);
  expect_ok(suite, "barrier", guarded([&](pg_error* err) { return t->barrier(comm, err); }));

  std::vector<float> a(16, 1.0f), r(16, 0.0f);
  pg_ccl_buffer sa = host_buffer(a.data()), rb = host_buffer(r.data());
  expect_error(suite, "an unknown dtype is refused", guarded([&](pg_error* err) {
                 return t->all_reduce(comm, &sa, &rb, 4, 999, PG_CCL_SUM, nullptr, err);
               }));
  expect_error(suite, "an unknown reduction is refused", guarded([&](pg_error* err) {
                 return t->all_reduce(comm, &sa, &rb, 4, PG_DTYPE_FLOAT32, 77, nullptr, err);
               }));
  expect_error(suite, "mean of int32 is refused", guarded([&](pg_error* err) {
                 return t->all_reduce(comm, &sa, &rb, 4, PG_DTYPE_INT32, PG_CCL_MEAN, nullptr, err);
               }));
  expect_error(suite, "a broadcast root outside the world is refused", guarded([&](pg_error* err) {
                 return t->broadcast(comm, &sa, &rb, 4, PG_DTYPE_FLOAT32, 1, nullptr, err);
               }));
  expect_error(suite, "comm_info of a NULL communicator is refused",
               guarded([&](pg_error* err) { return t->comm_info(nullptr, &info, err); }));
  t->comm_destroy(comm);
  t->comm_destroy(nullptr);
  suite.pass("comm_destroy, and of NULL");
  if (t->shutdown != nullptr) t->shutdown(state);
}

}  // namespace polygrad::conformance::detail
