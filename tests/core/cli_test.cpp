// The `polygrad` command line, run as a separate process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sys/wait.h>

#include <cstdio>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

/// The ABI versions as the load report spells them: this SDK's and the broken major's.
const std::string kAbi = "1." + std::to_string(PG_PLUGIN_ABI_MINOR);
const std::string kOtherMajorAbi = "2." + std::to_string(PG_PLUGIN_ABI_MINOR);

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int exit_code = -1;
  std::string output;
};

/// Run `args` with the CLI under a clean environment: no config file is found, plugins come
/// from `plugin_path` (and the build's own plugin directory). `stderr_too` merges stderr.
Result run_cli(const std::string& args, const std::string& plugin_path, bool stderr_too = true,
               const std::string& env = "") {
  std::string command =
      "cd '" + fs::temp_directory_path().string() +
      "' && env -u POLYGRAD_CONFIG -u POLYGRAD_DEVICE XDG_CONFIG_HOME=/nonexistent"
      " HOME=/nonexistent POLYGRAD_PLUGIN_PATH='" +
      plugin_path + "' " + env + " '" PG_CLI "' " + args + (stderr_too ? " 2>&1" : " 2>/dev/null");
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) result.output.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

const std::string kTestPluginDir = fs::path(kTestPlugin).parent_path().string();
const std::string kBothDirs = kBrokenDir + ":" + kTestPluginDir;

TEST(Cli, DevicesVerboseListsEveryCandidateWithItsReason) {
  Result r = run_cli("devices --verbose", kBothDirs, false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("test_host 1.2.3  ABI " + kAbi));
  EXPECT_THAT(r.output, HasSubstr("testdev:0  test device 0 label=none level=1 fast=false"));
  EXPECT_THAT(r.output, HasSubstr("dtypes bool int32 int64 float32 float64"));
  // test_plugin/plugin.cpp's capabilities: flags and group limits, printed with --verbose.
  // The SDK helper's streams add PG_CAP_ASYNC; the 1.3 fields it leaves 0 print as defaults.
  EXPECT_THAT(r.output, HasSubstr("    capabilities: host_memory, async\n"
                                  "    groups: max 1 threads per group, local dims 1 x 1 x 1, "
                                  "global dims 1073741824 x 1073741824 x 1073741824, local "
                                  "memory 0 bytes\n"
                                  "    subgroup size 1, index bits 64, largest allocation "
                                  "unknown\n"));
  EXPECT_THAT(r.output, HasSubstr("test_host 1.2.3  ABI " + kAbi + "  ISA 2  async  devices"));
  EXPECT_THAT(r.output, HasSubstr("no devices: no broken accelerator present"));
  EXPECT_THAT(r.output, HasSubstr("load report:"));
  EXPECT_THAT(r.output, HasSubstr(fs::weakly_canonical(broken("abi_major")).string() +
                                  " (env) ABI " + kOtherMajorAbi + " at abi: plugin ABI " +
                                  kOtherMajorAbi + ", host ABI " + kAbi));
  EXPECT_THAT(r.output, HasSubstr("at entry: no symbol pg_plugin_entry"));
  EXPECT_THAT(r.output, HasSubstr("at init: init threw a C++ exception across the C boundary"));
}

TEST(Cli, PolygradLogFiltersPluginAndHostMessages) {
  const std::string debug_line =
      "polygrad[test_host] debug: test_host initialised with 2 devices "
      "from " +
      fs::weakly_canonical(kTestPlugin).string();
  Result r = run_cli("devices", kBothDirs, true, "POLYGRAD_LOG=debug");
  EXPECT_THAT(r.output, HasSubstr(debug_line));  // plugin log, with host-given plugin_path
  EXPECT_THAT(r.output, HasSubstr("polygrad warning: refused "));
  r = run_cli("devices", kBothDirs, true);  // default: warnings
  EXPECT_THAT(r.output, Not(HasSubstr("debug:")));
  EXPECT_THAT(r.output, HasSubstr("polygrad warning: refused "));
  r = run_cli("devices", kBothDirs, true, "POLYGRAD_LOG=off");
  EXPECT_THAT(r.output, Not(HasSubstr("polygrad warning")));
  EXPECT_EQ(r.exit_code, 0);
}

TEST(Cli, DevicesWithoutVerboseHasNoReport) {
  Result r = run_cli("devices", kBothDirs, false);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.output, Not(HasSubstr("load report:")));
  EXPECT_THAT(r.output, Not(HasSubstr("capabilities:")));
  EXPECT_THAT(r.output, HasSubstr("testdev:1"));
}

TEST(Cli, DevicesJsonIsMachineReadableAndIncludesTheReport) {
  Result r = run_cli("devices --json", kBothDirs, false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  YAML::Node n = YAML::Load(r.output);
  EXPECT_EQ(n["host_abi"].as<std::string>(), kAbi);
  bool found_plugin = false;
  for (const auto& p : n["plugins"])
    if (p["name"].as<std::string>() == "test_host") {
      found_plugin = true;
      EXPECT_EQ(p["version"].as<std::string>(), "1.2.3");
      EXPECT_EQ(p["device_count"].as<int>(), 2);
      // The option schema test_plugin/plugin.cpp declares, in its order.
      ASSERT_EQ(p["options"].size(), 5u);
      const auto level = p["options"][1];
      EXPECT_EQ(level["key"].as<std::string>(), "level");
      EXPECT_EQ(level["type"].as<std::string>(), "integer");
      EXPECT_EQ(level["default"].as<std::string>(), "1");
      EXPECT_EQ(level["min"].as<double>(), 0.0);
      EXPECT_EQ(level["max"].as<double>(), 3.0);
      const auto fast = p["options"][2];
      EXPECT_EQ(fast["type"].as<std::string>(), "boolean");
      EXPECT_FALSE(fast["min"].IsDefined());  // unbounded: no range
    }
  EXPECT_TRUE(found_plugin);
  bool found_device = false;
  for (const auto& d : n["devices"])
    if (d["name"].as<std::string>() == "testdev:1") {
      found_device = true;
      EXPECT_EQ(d["target"].as<std::string>(), "interpreter");
      EXPECT_EQ(d["dtypes"][3].as<std::string>(), "float32");
      EXPECT_EQ(d["capabilities"][0].as<std::string>(), "host_memory");
      EXPECT_EQ(d["max_local_dims"][2].as<uint32_t>(), 1u);
      EXPECT_EQ(d["max_global_dims"][0].as<uint32_t>(), 1u << 30);
    }
  EXPECT_TRUE(found_device);
  int refused = 0;
  for (const auto& rec : n["report"]) {
    if (rec["status"].as<std::string>() != "refused") continue;
    ++refused;
    if (rec["path"].as<std::string>() == fs::weakly_canonical(broken("abi_minor")).string()) {
      EXPECT_EQ(rec["stage"].as<std::string>(), "abi");
      EXPECT_EQ(rec["source"].as<std::string>(), "env");
      EXPECT_THAT(rec["reason"].as<std::string>(), HasSubstr("plugin ABI 1.99 is newer"));
    }
  }
  EXPECT_EQ(refused, 8);
}

TEST(Cli, ConfigCheckNamesTheLineOfABadFile) {
  TempDir dir;
  std::string bad = dir.write("bad.yaml", "devices:\n  testdev:\n    level: 12\n");
  Result r = run_cli("config check " + bad, kTestPluginDir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, bad + ":3: devices.testdev.level: 12 is out of range [0, 3]\n");
  std::string unknown = dir.write("unknown.yaml", "default_device: testdev\nthreads: 2\n");
  r = run_cli("config check " + unknown, kTestPluginDir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr(unknown + ":2: threads: unknown key"));
}

TEST(Cli, ConfigCheckAcceptsAGoodFile) {
  TempDir dir;
  std::string good =
      dir.write("good.yaml", "default_device: testdev:1\ndevices:\n  testdev: {level: 3}\n");
  Result r = run_cli("config check " + good, kTestPluginDir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, good + ": ok\n");
}

TEST(Cli, DevicesFailsOnABadConfig) {
  TempDir dir;
  std::string bad = dir.write("bad.yaml", "devices:\n  testdev: {colour: red}\n");
  Result r = run_cli("devices", kTestPluginDir, true, "POLYGRAD_CONFIG='" + bad + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr(bad + ":2: devices.testdev.colour: unknown option"));
}

TEST(Cli, BadFlagsAndCommandsExitTwoWithUsageOnStderr) {
  Result r = run_cli("devices --bogus", kTestPluginDir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("usage: polygrad devices"));
  EXPECT_EQ(run_cli("devices --bogus", kTestPluginDir, false).output, "");  // all on stderr
  r = run_cli("frobnicate", kTestPluginDir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown command 'frobnicate'"));
  EXPECT_THAT(r.output, HasSubstr("usage: polygrad"));
  EXPECT_EQ(run_cli("", kTestPluginDir).exit_code, 2);
  EXPECT_EQ(run_cli("--bogus", kTestPluginDir).exit_code, 2);
  EXPECT_EQ(run_cli("config check", kTestPluginDir).exit_code, 2);
  EXPECT_EQ(run_cli("config frob x.yaml", kTestPluginDir).exit_code, 2);
  EXPECT_EQ(run_cli("config check a.yaml b.yaml", kTestPluginDir).exit_code, 2);
  r = run_cli("devices extra", kTestPluginDir);  // devices takes no positional argument
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("usage: polygrad devices"));
}

TEST(Cli, HelpEverywhere) {
  for (const char* args : {"--help", "devices --help", "config --help"
#ifdef PG_HAVE_CONFORMANCE
                           ,
                           "conformance --help"
#endif
       }) {
    Result r = run_cli(args, kTestPluginDir, false);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_THAT(r.output, HasSubstr("usage: polygrad")) << args;
  }
}

#ifdef PG_HAVE_CONFORMANCE
TEST(Cli, ConformanceWithAnUnknownPluginName) {
  Result r = run_cli("conformance no_such_plugin", kTestPluginDir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("no plugin named 'no_such_plugin'"));
}

TEST(Cli, ConformanceResolvesAPluginNameThroughDiscovery) {
  Result r = run_cli("conformance test_host --abi-only", kTestPluginDir, false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(fs::weakly_canonical(kTestPlugin).string()));
  EXPECT_THAT(r.output, HasSubstr("test_host 1.2.3"));
}
#endif

TEST(Cli, PluginsBesideLibpolygradAreFoundThroughItsOwnPath) {
  // A private copy of libpolygrad with a plugin in <its dir>/polygrad/plugins. The CLI's
  // RUNPATH yields to LD_LIBRARY_PATH, so it loads the copy and must search beside it.
  TempDir root;
  root.copy(PG_LIBPOLYGRAD, "lib/" + fs::path(PG_LIBPOLYGRAD).filename().string());
  std::string plugin = root.copy(kTestPlugin, "lib/polygrad/plugins/polygrad_test_host.so");
  Result r = run_cli("devices --json", "", false, "LD_LIBRARY_PATH='" + root.str() + "/lib'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  YAML::Node n = YAML::Load(r.output);
  bool found = false;
  for (const auto& rec : n["report"])
    if (rec["path"].as<std::string>() == fs::weakly_canonical(plugin).string()) {
      found = true;
      EXPECT_EQ(rec["source"].as<std::string>(), "libdir");
      EXPECT_EQ(rec["status"].as<std::string>(), "loaded");
    }
  EXPECT_TRUE(found) << r.output;
}

}  // namespace
}  // namespace polygrad_test
