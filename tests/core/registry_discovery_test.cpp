// Discovery order (config, api, env), shadowing, deferred discovery, loading by name or path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

using polygrad::LoadStage;
using polygrad::LoadStatus;
using polygrad::PluginSource;
using ::testing::HasSubstr;

std::string canonical(const std::string& p) {
  return fs::weakly_canonical(p).string();
}

TEST(Discovery, FirstOfTwoSameNamedFilesWinsAndTheLaterIsShadowed) {
  TempDir a, b;
  std::string first = a.copy(kTestPlugin, "polygrad_test_host.so");
  std::string second = b.copy(kTestPlugin, "polygrad_test_host.so");
  polygrad::Registry registry(isolated({a.str(), b.str()}));
  polygrad::LoadReport report = registry.report();
  ASSERT_EQ(report.records.size(), 2u);
  EXPECT_EQ(report.records[0].path, canonical(first));
  EXPECT_TRUE(report.records[0].loaded());
  EXPECT_EQ(report.records[1].path, canonical(second));
  EXPECT_EQ(report.records[1].status, LoadStatus::refused);
  EXPECT_EQ(report.records[1].stage, LoadStage::unique);
  EXPECT_EQ(report.records[1].reason, "shadowed by " + canonical(first));
  EXPECT_EQ(registry.plugins().at(0).path, canonical(first));
}

TEST(Discovery, SamePluginNameUnderAnotherFileNameIsShadowedAfterReadingItsTable) {
  TempDir a, b;
  std::string first = a.copy(kTestPlugin, "polygrad_test_host.so");
  std::string renamed = b.copy(kTestPlugin, "polygrad_renamed.so");
  polygrad::Registry registry(isolated({a.str(), b.str()}));
  polygrad::LoadReport report = registry.report();
  const polygrad::LoadRecord* r = record_for(report, renamed);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->plugin_name, "test_host");
  EXPECT_EQ(r->reason, "shadowed by " + canonical(first));
}

TEST(Discovery, OnlyPolygradPrefixedSharedObjectsInADirectoryAreCandidates) {
  TempDir a;
  a.copy(kTestPlugin, "libsomething.so");
  a.copy(kTestPlugin, "polygrad_test_host.so.bak");
  std::string good = a.copy(kTestPlugin, "polygrad_test_host.so");
  polygrad::Registry registry(isolated({a.str()}));
  polygrad::LoadReport report = registry.report();
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_EQ(report.records[0].path, canonical(good));
}

TEST(Discovery, ConfigPathsComeBeforeApiPathsWhichComeBeforeTheEnvironment) {
  TempDir cfg_dir, api_dir, env_dir, conf;
  std::string from_config = cfg_dir.copy(kTestPlugin, "polygrad_test_host.so");
  std::string from_api = api_dir.copy(kTestPlugin, "polygrad_test_host.so");
  std::string from_env = env_dir.copy(kTestPlugin, "polygrad_test_host.so");
  std::string config = conf.write("polygrad.yaml", "plugin_paths: [" + cfg_dir.str() + "]\n");
  ScopedEnv env("POLYGRAD_PLUGIN_PATH", env_dir.str());
  polygrad::RegistryOptions options = isolated({api_dir.str()}, config);
  options.use_env = true;
  polygrad::Registry registry(options);
  polygrad::LoadReport report = registry.report();
  ASSERT_EQ(report.records.size(), 3u);
  EXPECT_EQ(report.records[0].path, canonical(from_config));
  EXPECT_EQ(report.records[0].source, PluginSource::config);
  EXPECT_TRUE(report.records[0].loaded());
  EXPECT_EQ(report.records[1].path, canonical(from_api));
  EXPECT_EQ(report.records[1].source, PluginSource::api);
  EXPECT_EQ(report.records[2].path, canonical(from_env));
  EXPECT_EQ(report.records[2].source, PluginSource::env);
  EXPECT_EQ(report.records[2].reason, "shadowed by " + canonical(from_config));
}

TEST(Discovery, RelativeConfigPluginPathsAreResolvedAgainstTheConfigFile) {
  TempDir root;
  std::string plugin = root.copy(kTestPlugin, "plugins/polygrad_test_host.so");
  std::string config = root.write("conf/polygrad.yaml", "plugin_paths: [../plugins]\n");
  polygrad::Registry registry(isolated({}, config));
  polygrad::LoadReport report = registry.report();
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_EQ(report.records[0].path, canonical(plugin));
  EXPECT_EQ(report.config_path, config);
}

TEST(Discovery, EnvironmentListTakesFilesAndDirectoriesAndSkipsEmptyEntries) {
  TempDir dir;
  std::string plugin = dir.copy(kTestPlugin, "polygrad_test_host.so");
  ScopedEnv env("POLYGRAD_PLUGIN_PATH", "::" + broken("init_error") + ":" + dir.str() + ":");
  polygrad::RegistryOptions options = isolated({});
  options.use_env = true;
  polygrad::Registry registry(options);
  polygrad::LoadReport report = registry.report();
  ASSERT_EQ(report.records.size(), 2u);
  EXPECT_EQ(report.records[0].path, canonical(broken("init_error")));
  EXPECT_EQ(report.records[0].source, PluginSource::env);
  EXPECT_EQ(report.records[1].path, canonical(plugin));
  EXPECT_TRUE(report.records[1].loaded());
}

TEST(Discovery, NamedPathThatDoesNotExistIsRecorded) {
  ScopedEnv env("POLYGRAD_PLUGIN_PATH", "/nonexistent/polygrad/plugins");
  polygrad::RegistryOptions options = isolated({});
  options.use_env = true;
  polygrad::Registry registry(options);
  polygrad::LoadReport report = registry.report();
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_EQ(report.records[0].path, "/nonexistent/polygrad/plugins");
  EXPECT_EQ(report.records[0].source, PluginSource::env);
  EXPECT_EQ(report.records[0].stage, LoadStage::open);
  EXPECT_EQ(report.records[0].reason, "no such file or directory");
}

TEST(Discovery, TheSameDirectoryNamedTwiceIsConsideredOnce) {
  TempDir dir;
  dir.copy(kTestPlugin, "polygrad_test_host.so");
  polygrad::Registry registry(isolated({dir.str(), dir.str() + "/.", dir.str() + "/"}));
  EXPECT_EQ(registry.report().records.size(), 1u);
}

TEST(Discovery, HappensOnFirstUseNotAtConstruction) {
  TempDir dir;
  polygrad::Registry registry(isolated({dir.str()}));
  // The plugin appears after the registry was made but before its first use.
  dir.copy(kTestPlugin, "polygrad_test_host.so");
  EXPECT_EQ(registry.device_names(), (std::vector<std::string>{"testdev:0", "testdev:1"}));
}

TEST(Discovery, PathAddedAfterDiscoveryIsLoadedAtOnce) {
  TempDir dir;
  dir.copy(kTestPlugin, "polygrad_test_host.so");
  polygrad::Registry registry(isolated({}));
  EXPECT_TRUE(registry.device_names().empty());
  registry.add_plugin_path(dir.str());
  EXPECT_EQ(registry.device_names().size(), 2u);
  EXPECT_EQ(registry.report().records.at(0).source, PluginSource::api);
}

TEST(Discovery, LoadByPathByNameAndUnknownName) {
  polygrad::Registry registry(isolated({}));
  polygrad::LoadRecord r = registry.load(kTestPlugin);
  EXPECT_TRUE(r.loaded());
  EXPECT_EQ(r.plugin_name, "test_host");
  EXPECT_EQ(r.plugin_version, "1.2.3");
  EXPECT_EQ(r.device_prefix, "testdev");
  EXPECT_EQ(r.device_count, 2u);
  // Loading again, by path or by name, returns the same record and loads nothing new.
  EXPECT_EQ(registry.load(kTestPlugin).path, r.path);
  EXPECT_EQ(registry.load("test_host").path, r.path);
  EXPECT_EQ(registry.report().records.size(), 1u);
  EXPECT_EQ(registry.find_plugin("test_host"), r.path);
  EXPECT_EQ(registry.find_plugin("nope"), "");
  try {
    registry.load("nope");
    FAIL() << "expected an error";
  } catch (const polygrad::Error& e) {
    EXPECT_EQ(e.kind(), polygrad::ErrorKind::user);
    EXPECT_THAT(e.what(), HasSubstr("[load] no plugin named 'nope'"));
  }
}

TEST(Discovery, LoadByNameFindsARefusedCandidate) {
  polygrad::Registry registry(isolated({kBrokenDir}));
  polygrad::LoadRecord r = registry.load("broken_init_error");
  EXPECT_EQ(r.status, LoadStatus::refused);
  EXPECT_EQ(r.stage, LoadStage::init);
}

TEST(Discovery, PluginInfoDescribesTheOptionSchema) {
  polygrad::Registry registry(isolated({kTestPlugin}));
  std::vector<polygrad::PluginInfo> plugins = registry.plugins();
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0].name, "test_host");
  EXPECT_EQ(plugins[0].abi_major, 1u);
  EXPECT_EQ(plugins[0].isa_version, static_cast<uint32_t>(PG_KERNEL_ISA_VERSION));
  ASSERT_EQ(plugins[0].options.size(), 5u);
  EXPECT_EQ(plugins[0].options[1].key, "level");
  EXPECT_EQ(plugins[0].options[1].type, PG_OPTION_INT);
  EXPECT_EQ(plugins[0].options[1].max_value, 3.0);
}

}  // namespace
}  // namespace polygrad_test
