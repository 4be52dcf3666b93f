// ABI guard of the collective-communication SDK (ccl.h): the size and field offsets of every
// struct and the value of every enum constant, compared with the committed baseline
// sdk/abi/ccl-layout-<major>.txt. At the same CCL ABI version nothing may change; at a new
// minor every fact of the baseline must still hold except the sizes of the tables that carry
// struct_size (append-only), and the baseline is then regenerated:
//   sdk_ccl_abi_layout_test --regenerate-baseline=sdk/abi/ccl-layout-<major>.txt
#include <polygrad/ccl.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

// clang-format off
#define PG_CCL_STRUCTS(S, F)                                                                     \
  S(pg_ccl_bootstrap) F(pg_ccl_bootstrap, struct_size) F(pg_ccl_bootstrap, rank)                 \
    F(pg_ccl_bootstrap, world_size) F(pg_ccl_bootstrap, reserved) F(pg_ccl_bootstrap, address)   \
    F(pg_ccl_bootstrap, timeout_seconds)                                                         \
  S(pg_ccl_buffer) F(pg_ccl_buffer, struct_size) F(pg_ccl_buffer, reserved)                      \
    F(pg_ccl_buffer, device_plugin) F(pg_ccl_buffer, device) F(pg_ccl_buffer, buffer)            \
    F(pg_ccl_buffer, host) F(pg_ccl_buffer, offset)                                              \
  S(pg_ccl_comm_info) F(pg_ccl_comm_info, struct_size) F(pg_ccl_comm_info, rank)                 \
    F(pg_ccl_comm_info, world_size) F(pg_ccl_comm_info, reserved)                                \
    F(pg_ccl_comm_info, timeout_seconds) F(pg_ccl_comm_info, transport)                          \
  S(pg_ccl_plugin) F(pg_ccl_plugin, abi_major) F(pg_ccl_plugin, abi_minor)                       \
    F(pg_ccl_plugin, struct_size) F(pg_ccl_plugin, reserved) F(pg_ccl_plugin, name)              \
    F(pg_ccl_plugin, version) F(pg_ccl_plugin, options) F(pg_ccl_plugin, option_count)          \
    F(pg_ccl_plugin, reserved2) F(pg_ccl_plugin, init) F(pg_ccl_plugin, shutdown)                \
    F(pg_ccl_plugin, probe) F(pg_ccl_plugin, comm_init) F(pg_ccl_plugin, comm_destroy)           \
    F(pg_ccl_plugin, comm_info) F(pg_ccl_plugin, all_reduce) F(pg_ccl_plugin, broadcast)         \
    F(pg_ccl_plugin, all_gather) F(pg_ccl_plugin, reduce_scatter) F(pg_ccl_plugin, barrier)

#define PG_CCL_ENUMS(E)                                                                        \
  E(pg_ccl_reduce_op, PG_CCL_SUM) E(pg_ccl_reduce_op, PG_CCL_MAX) E(pg_ccl_reduce_op, PG_CCL_MEAN) \
  E(pg_status, PG_ERR_PEER) E(pg_status, PG_ERR_TIMEOUT)
// clang-format on

/// Tables that carry struct_size: they may grow at a minor bump.
const std::set<std::string> kGrowable = {"pg_ccl_bootstrap", "pg_ccl_buffer", "pg_ccl_comm_info",
                                         "pg_ccl_plugin"};

std::string version_line() {
  return "ccl abi " + std::to_string(PG_CCL_ABI_MAJOR) + "." + std::to_string(PG_CCL_ABI_MINOR);
}

std::string current_layout() {
  std::ostringstream out;
  out << version_line() << "\n";
  out << "entry " << PG_CCL_ENTRY_NAME << "\n";
#define S(type) \
  out << "struct " #type " size " << sizeof(type) << " align " << alignof(type) << "\n";
#define F(type, field)                                                             \
  out << "field " #type "." #field " offset " << offsetof(type, field) << " size " \
      << sizeof(static_cast<type*>(nullptr)->field) << "\n";
  PG_CCL_STRUCTS(S, F)
#undef S
#undef F
#define E(type, name) out << "enum " #type " " #name " " << static_cast<long long>(name) << "\n";
  PG_CCL_ENUMS(E)
#undef E
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

std::string baseline_path() {
  return std::string(POLYGRAD_ABI_BASELINE_DIR) + "/ccl-layout-" +
         std::to_string(PG_CCL_ABI_MAJOR) + ".txt";
}

std::string regenerate_command() {
  return std::string(POLYGRAD_CCL_ABI_TEST_BINARY) + " --regenerate-baseline=" + baseline_path();
}

/// "" when `current` agrees with `baseline`, else what is wrong and what to do.
std::string compare_layout(const std::string& current, const std::string& baseline) {
  std::vector<std::string> now = lines_of(current), then = lines_of(baseline);
  if (now.empty() || then.empty()) return "the baseline is empty; run " + regenerate_command();
  std::set<std::string> now_set(now.begin(), now.end());
  std::string missing;
  for (const std::string& l : then) {
    if (now_set.count(l)) continue;
    if (now[0] != then[0]) {  // a new minor: growable tables may have grown
      if (l.rfind("ccl abi ", 0) == 0) continue;
      const std::string type = l.rfind("struct ", 0) == 0 ? l.substr(7, l.find(' ', 7) - 7) : "";
      if (kGrowable.count(type)) continue;
    }
    missing += "\n  - " + l;
  }
  if (now[0] == then[0]) {
    std::set<std::string> then_set(then.begin(), then.end());
    std::string added;
    for (const std::string& l : now)
      if (!then_set.count(l)) added += "\n  + " + l;
    if (missing.empty() && added.empty()) return "";
    return "ccl.h's layout changed without a CCL ABI version bump: append fields and bump "
           "PG_CCL_ABI_MINOR (or the major for a break), then run " +
           regenerate_command() + missing + added;
  }
  const bool same_major =
      now[0].substr(0, now[0].find('.')) == then[0].substr(0, then[0].find('.'));
  std::string msg = "ccl.h declares " + now[0] + " but the baseline records " + then[0] +
                    ": a new baseline is needed";
  if (same_major && !missing.empty())
    msg += "; and the change is not append-only (a major bump is required):" + missing;
  return msg + "; run " + regenerate_command();
}

TEST(CclAbiLayout, MatchesCommittedBaseline) {
  std::ifstream in(baseline_path());
  ASSERT_TRUE(static_cast<bool>(in))
      << "no baseline " << baseline_path() << ": run " << regenerate_command();
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(compare_layout(current_layout(), text.str()), "");
}

TEST(CclAbiLayout, DetectsAMovedFieldAtTheSameVersion) {
  std::string now = current_layout();
  const std::string needle = "field pg_ccl_plugin.all_reduce offset ";
  size_t at = now.find(needle);
  ASSERT_NE(at, std::string::npos);
  std::string moved = now;
  moved.insert(at + needle.size(), 1, '1');  // e.g. offset 80 -> 180
  std::string problems = compare_layout(moved, now);
  EXPECT_NE(problems.find("without a CCL ABI version bump"), std::string::npos) << problems;
  EXPECT_NE(problems.find("pg_ccl_plugin.all_reduce"), std::string::npos) << problems;
}

TEST(CclAbiLayout, AGrownTableAtANewMinorIsAppendOnly) {
  std::string now = current_layout();
  std::string body = now.substr(now.find('\n') + 1);
  std::ostringstream text;  // the same facts under a newer minor, plus an appended field
  text << "ccl abi 1.99\n" << body << "field pg_ccl_plugin.new_slot offset 999 size 8\n";
  std::string grown = text.str();
  std::string problems = compare_layout(grown, now);
  EXPECT_NE(problems.find("a new baseline is needed"), std::string::npos) << problems;
  EXPECT_EQ(problems.find("not append-only"), std::string::npos) << problems;
  std::string broken = grown;
  const std::string field = "field pg_ccl_buffer.offset offset ";
  broken.insert(broken.find(field) + field.size(), 1, '1');
  EXPECT_NE(compare_layout(broken, now).find("not append-only"), std::string::npos);
}

}  // namespace

int main(int argc, char** argv) {
  const char* flag = "--regenerate-baseline=";
  for (int k = 1; k < argc; ++k) {
    if (std::strncmp(argv[k], flag, std::strlen(flag)) == 0) {
      std::ofstream out(argv[k] + std::strlen(flag));
      out << "# polygrad ccl plugin ABI layout baseline. Generated by sdk_ccl_abi_layout_test\n"
             "# --regenerate-baseline; regenerate only together with a CCL ABI version bump.\n"
          << current_layout();
      if (!out) return 1;
      std::cout << "wrote " << argv[k] + std::strlen(flag) << "\n";
      return 0;
    }
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
