// Plugins linked into the program (PG_PLUGIN_STATIC_NAME): the template and test_host, each
// with its own entry symbol, registered and run without any plugin file.
#include <polygrad/polygrad.h>
#include <polygrad/program_builder.hpp>
#include <polygrad/registry.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

extern "C" const pg_plugin* pg_plugin_entry_template(void);
extern "C" const pg_plugin* pg_plugin_entry_test_host(void);

namespace {

polygrad::RegistryOptions files_none() {
  polygrad::RegistryOptions o;
  o.use_env = false;
  o.use_libdir = false;
  o.use_build_tree = false;
  o.search_config = false;
  return o;
}

/// out[i] = x[i] * x[i] on `device` for x = {1, 2, 3}.
std::vector<float> squares(const polygrad::Device& device) {
  polygrad::sdk::ProgramBuilder b("square_f32");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto v = b.load(b.index(x, i));
  b.store(b.index(out, i), b.binary(PG_OP_MUL, v, v));
  const std::vector<float> in = {1, 2, 3};
  polygrad::Buffer bo = device.alloc(12), bx = device.alloc(12);
  device.copy_in(bx, in.data(), 12);
  polygrad::Program p = device.load(device.render(b.program()), b.program());
  polygrad::LaunchArgs args;
  args.buffers = {&bo, &bx};
  args.global_size = {3, 1, 1};
  device.launch(p, args);
  device.synchronize();
  std::vector<float> result(3);
  device.copy_out(result.data(), bo, 12);
  return result;
}

TEST(StaticPlugins, TwoLinkedPluginsRegisterAndRun) {
  // A registry that discovers before anything is registered finds no plugin ...
  polygrad::Registry early(files_none());
  EXPECT_TRUE(early.device_names().empty());
  // ... and loads each later registration at once; a registry made afterwards finds them first
  // in discovery, in registration order.
  polygrad::register_static_plugin(&pg_plugin_entry_template);
  EXPECT_EQ(pg_plugin_register_static(&pg_plugin_entry_test_host), PG_API_OK);
  polygrad::register_static_plugin(&pg_plugin_entry_template);  // again: a no-op
  const std::vector<std::string> names = {"template:0", "statictest:0", "statictest:1"};
  EXPECT_EQ(early.device_names(), names);
  polygrad::Registry registry(files_none());
  EXPECT_EQ(registry.device_names(), names);
  polygrad::LoadReport report = registry.report();
  ASSERT_EQ(report.records.size(), 2u);
  EXPECT_EQ(report.records[0].path, "static:template");
  EXPECT_EQ(report.records[1].path, "static:test_host");
  for (const polygrad::LoadRecord& r : report.records) {
    EXPECT_TRUE(r.loaded()) << r.reason;
    EXPECT_EQ(r.source, polygrad::PluginSource::linked);
  }
  EXPECT_EQ(early.report().records.size(), 2u);
  const std::vector<float> want = {1, 4, 9};
  EXPECT_EQ(squares(registry.device("template")), want);
  EXPECT_EQ(squares(registry.device("statictest")), want);
  EXPECT_EQ(squares(early.device("statictest:1")), want);
}

TEST(StaticPlugins, ANullEntryIsAnError) {
  EXPECT_THROW(polygrad::register_static_plugin(nullptr), polygrad::Error);
  EXPECT_EQ(pg_plugin_register_static(nullptr), PG_API_ERR_INVALID_ARGUMENT);
}

}  // namespace
