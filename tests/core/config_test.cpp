// The YAML config: every error message, the search order, POLYGRAD_DEVICE, and options
// reaching the plugin through get_option.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

using polygrad::Config;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string parse_error(const std::string& text) {
  try {
    Config::parse_string(text, "/etc/pg.yaml");
  } catch (const polygrad::Error& e) {
    EXPECT_EQ(e.kind(), polygrad::ErrorKind::user);
    return e.what();
  }
  return "(no error)";
}

/// The config error a registry with the test plugin reports for `text`.
std::string registry_error(const TempDir& dir, const std::string& text) {
  std::string file = dir.write("polygrad.yaml", text);
  polygrad::Registry registry(isolated({kTestPlugin}, file));
  try {
    registry.discover();
  } catch (const polygrad::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigParse, ReadsEveryKey) {
  Config c = Config::parse_string(
      "default_device: cpu:1\n"
      "plugin_paths: [/opt/plugins, rel/dir]\n"
      "devices:\n"
      "  cpu:\n"
      "    threads: 8\n"
      "  \"cuda:1\": {opt_level: 3}\n"
      "  wasm:\n",
      "/etc/polygrad/pg.yaml");
  EXPECT_EQ(c.path(), "/etc/polygrad/pg.yaml");
  EXPECT_EQ(c.default_device().value(), "cpu:1");
  EXPECT_EQ(c.plugin_paths(), (std::vector<std::string>{"/opt/plugins", "/etc/polygrad/rel/dir"}));
  ASSERT_EQ(c.devices().size(), 3u);
  EXPECT_EQ(c.devices()[0].prefix, "cpu");
  EXPECT_EQ(c.devices()[0].index, -1);
  EXPECT_EQ(c.devices()[0].line, 4);
  ASSERT_EQ(c.devices()[0].options.size(), 1u);
  EXPECT_EQ(c.devices()[0].options[0].key, "threads");
  EXPECT_EQ(c.devices()[0].options[0].value, "8");
  EXPECT_EQ(c.devices()[0].options[0].line, 5);
  EXPECT_EQ(c.devices()[1].prefix, "cuda");
  EXPECT_EQ(c.devices()[1].index, 1);
  EXPECT_TRUE(c.devices()[2].options.empty());
}

TEST(ConfigParse, EmptyFileIsTheDefaultConfig) {
  Config c = Config::parse_string("", "/x.yaml");
  EXPECT_FALSE(c.default_device().has_value());
  EXPECT_TRUE(c.plugin_paths().empty());
  EXPECT_TRUE(c.devices().empty());
}

TEST(ConfigParse, UnknownKeyNamesFileLineAndKey) {
  EXPECT_EQ(parse_error("default_device: cpu\n\nthreads: 4\n"),
            "/etc/pg.yaml:3: threads: unknown key (expected default_device, plugin_paths or "
            "devices)");
}

TEST(ConfigParse, WrongTypes) {
  EXPECT_EQ(parse_error("plugin_paths: /opt/x\n"),
            "/etc/pg.yaml:1: plugin_paths: expected a list of paths, got a scalar");
  EXPECT_EQ(parse_error("plugin_paths:\n  - /a\n  - {x: 1}\n"),
            "/etc/pg.yaml:3: plugin_paths[1]: expected a path, got a map");
  EXPECT_EQ(parse_error("default_device: [cpu]\n"),
            "/etc/pg.yaml:1: default_device: expected a device name, got a list");
  EXPECT_EQ(parse_error("devices: [cpu]\n"),
            "/etc/pg.yaml:1: devices: expected a map of device names, got a list");
  EXPECT_EQ(parse_error("devices:\n  cpu: 4\n"),
            "/etc/pg.yaml:2: devices.cpu: expected a map of options, got a scalar");
  EXPECT_EQ(parse_error("- a\n- b\n"),
            "/etc/pg.yaml:1: (top level): expected a map of settings, got a list");
}

TEST(ConfigParse, BadDeviceNamesAndDuplicates) {
  EXPECT_EQ(parse_error("default_device: GPU!\n"),
            "/etc/pg.yaml:1: default_device: 'GPU!' is not a device name (expected e.g. cpu or "
            "cuda:1)");
  EXPECT_EQ(parse_error("devices:\n  \"cpu:x\": {}\n"),
            "/etc/pg.yaml:2: devices.cpu:x: 'cpu:x' is not a device name (expected e.g. cpu or "
            "\"cpu:1\")");
  EXPECT_EQ(parse_error("devices:\n  cpu: {}\n  cpu: {}\n"),
            "/etc/pg.yaml:3: devices.cpu: given twice (first on line 2)");
  EXPECT_EQ(parse_error("devices:\n  cpu:\n    threads: 1\n    threads: 2\n"),
            "/etc/pg.yaml:4: devices.cpu.threads: given twice (first on line 3)");
}

TEST(ConfigParse, MalformedYamlUsesTheParsersPosition) {
  std::string e = parse_error("default_device: cpu\ndevices: {cpu: [1, 2}\n");
  EXPECT_THAT(e, StartsWith("/etc/pg.yaml:2: (yaml): malformed YAML: "));
  EXPECT_THAT(e, HasSubstr("(column "));
}

TEST(ConfigParse, UnreadableFile) {
  try {
    Config::parse_file("/nonexistent/pg.yaml");
    FAIL();
  } catch (const polygrad::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/pg.yaml:0: (file): cannot read the config file: No such file or "
              "directory");
  }
}

TEST(ConfigRegistry, UnknownDevice) {
  TempDir dir;
  EXPECT_EQ(registry_error(dir, "devices:\n  testdev: {}\n  tpu:\n    cores: 4\n"),
            dir.str() +
                "/polygrad.yaml:3: devices.tpu: unknown device: no loaded plugin serves "
                "'tpu' (served: testdev)");
  EXPECT_EQ(registry_error(dir, "default_device: tpu:0\n"),
            dir.str() +
                "/polygrad.yaml:1: default_device: unknown device 'tpu:0': no loaded "
                "plugin serves 'tpu' (served: testdev)");
}

TEST(ConfigRegistry, UnknownOption) {
  TempDir dir;
  EXPECT_EQ(registry_error(dir, "devices:\n  testdev:\n    speed: 3\n"),
            dir.str() +
                "/polygrad.yaml:3: devices.testdev.speed: unknown option for device "
                "'testdev' (known: devices, level, fast, ratio, label)");
}

TEST(ConfigRegistry, ValuesOutOfRangeOrOfTheWrongType) {
  TempDir dir;
  const std::string file = dir.str() + "/polygrad.yaml";
  EXPECT_EQ(registry_error(dir, "devices:\n  \"testdev:1\":\n    level: 7\n"),
            file + ":3: devices.testdev:1.level: 7 is out of range [0, 3]");
  EXPECT_EQ(registry_error(dir, "devices:\n  testdev: {ratio: 1.5}\n"),
            file + ":2: devices.testdev.ratio: 1.5 is out of range [0, 1]");
  EXPECT_EQ(registry_error(dir, "devices:\n  testdev: {level: high}\n"),
            file + ":2: devices.testdev.level: expected an integer, got 'high'");
  EXPECT_EQ(registry_error(dir, "devices:\n  testdev: {level: 1.5}\n"),
            file + ":2: devices.testdev.level: expected an integer, got '1.5'");
  EXPECT_EQ(registry_error(dir, "devices:\n  testdev: {fast: maybe}\n"),
            file + ":2: devices.testdev.fast: expected a boolean (true or false), got 'maybe'");
  EXPECT_EQ(registry_error(dir, "devices:\n  testdev:\n    label: [a, b]\n"),
            file + ":3: devices.testdev.label: expected a string, got a list");
}

TEST(ConfigRegistry, ConfigErrorIsStickyButTheReportStillWorks) {
  TempDir dir;
  std::string file = dir.write("polygrad.yaml", "devices:\n  testdev: {level: 9}\n");
  polygrad::Registry registry(isolated({kTestPlugin}, file));
  polygrad::LoadReport report = registry.report();  // does not throw
  EXPECT_EQ(report.config_error, file + ":2: devices.testdev.level: 9 is out of range [0, 3]");
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_EQ(report.records[0].stage, polygrad::LoadStage::options);
  EXPECT_THROW(registry.device("testdev"), polygrad::Error);
  EXPECT_THROW(registry.plugins(), polygrad::Error);
}

TEST(ConfigRegistry, OptionsReachThePluginIndexSpecificFirst) {
  TempDir dir;
  std::string file = dir.write("polygrad.yaml",
                               "devices:\n"
                               "  testdev: {label: all, level: 2, fast: yes}\n"
                               "  \"testdev:1\": {label: one}\n");
  polygrad::Registry registry(isolated({kTestPlugin}, file));
  EXPECT_EQ(registry.device("testdev:0").properties().name,
            "test device 0 label=all level=2 fast=true");
  EXPECT_EQ(registry.device("testdev:1").properties().name,
            "test device 1 label=one level=2 fast=true");
}

TEST(ConfigRegistry, PluginWideOptionCanLeaveZeroDevices) {
  TempDir dir;
  std::string file = dir.write("polygrad.yaml", "devices:\n  testdev: {devices: 0}\n");
  polygrad::Registry registry(isolated({kTestPlugin}, file));
  polygrad::LoadReport report = registry.report();
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_TRUE(report.records[0].loaded());
  EXPECT_EQ(report.records[0].device_count, 0u);
  EXPECT_EQ(report.records[0].reason, "configured with devices: 0");
}

class ConfigSearch : public ::testing::Test {
 protected:
  ConfigSearch()
      : old_cwd_(fs::current_path()),
        config_env_("POLYGRAD_CONFIG", std::nullopt),
        xdg_env_("XDG_CONFIG_HOME", std::nullopt),
        home_env_("HOME", home_.str()) {
    fs::current_path(cwd_.path());
  }
  ~ConfigSearch() override { fs::current_path(old_cwd_); }

  fs::path old_cwd_;
  TempDir cwd_, home_, xdg_, elsewhere_;
  ScopedEnv config_env_, xdg_env_, home_env_;
};

TEST_F(ConfigSearch, OrderIsEnvThenWorkingDirectoryThenUserConfig) {
  std::string explicit_file = elsewhere_.write("mine.yaml", "");
  std::string local = cwd_.write("polygrad.yaml", "");
  std::string xdg_file = xdg_.write("polygrad/config.yaml", "");
  std::string home_file = home_.write(".config/polygrad/config.yaml", "");
  {
    ScopedEnv config("POLYGRAD_CONFIG", explicit_file);
    ScopedEnv xdg("XDG_CONFIG_HOME", xdg_.str());
    EXPECT_EQ(Config::find_file(), explicit_file);
  }
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", xdg_.str());
    EXPECT_EQ(fs::weakly_canonical(Config::find_file()), fs::weakly_canonical(local));
  }
  fs::remove(local);
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", xdg_.str());
    EXPECT_EQ(Config::find_file(), xdg_file);
  }
  EXPECT_EQ(Config::find_file(), home_file);  // XDG_CONFIG_HOME unset: ~/.config
  fs::remove(home_file);
  EXPECT_EQ(Config::find_file(), "");
}

TEST_F(ConfigSearch, MissingExplicitFileIsAnError) {
  ScopedEnv config("POLYGRAD_CONFIG", "/nonexistent/pg.yaml");
  try {
    Config::find_file();
    FAIL();
  } catch (const polygrad::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "POLYGRAD_CONFIG: '/nonexistent/pg.yaml' is not a readable file");
  }
}

TEST_F(ConfigSearch, RegistryUsesTheFoundFileAndPolygradDeviceOverridesIt) {
  cwd_.write("polygrad.yaml", "default_device: testdev:1\n");
  ScopedEnv device_env("POLYGRAD_DEVICE", std::nullopt);
  polygrad::RegistryOptions options = isolated({kTestPlugin});
  options.search_config = true;
  polygrad::Registry registry(options);
  EXPECT_EQ(registry.default_device_name(), "testdev:1");
  EXPECT_EQ(registry.default_device().name(), "testdev:1");
  {
    ScopedEnv device("POLYGRAD_DEVICE", "testdev:0");
    EXPECT_EQ(registry.default_device_name(), "testdev:0");
    EXPECT_EQ(registry.default_device().name(), "testdev:0");
  }
  polygrad::Registry no_config(isolated({kTestPlugin}));
  EXPECT_EQ(no_config.default_device_name(), "cpu");
}

}  // namespace
}  // namespace polygrad_test
