// The JSON writer's escaping and the text/JSON renderings of a load report.
#include <polygrad/json_writer.hpp>
#include <polygrad/load_report.hpp>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace polygrad_test {
namespace {

TEST(JsonWriter, EscapesEveryCharacterJsonRequires) {
  EXPECT_EQ(polygrad::JsonWriter::quote("a\"b\\c\n\t\r\b\f"), R"("a\"b\\c\n\t\r\b\f")");
  EXPECT_EQ(polygrad::JsonWriter::quote(std::string("\x01\x1f", 2)), R"("\u0001\u001f")");
  EXPECT_EQ(polygrad::JsonWriter::quote("caf\xc3\xa9 /"), "\"caf\xc3\xa9 /\"");
}

TEST(JsonWriter, NestedOutputParsesBackToTheSameValues) {
  const std::string tricky = "quote\" backslash\\ newline\n ctl\x02 end";
  polygrad::JsonWriter w;
  w.begin_object();
  w.key("s").value(tricky);
  w.key("n").value(42u);
  w.key("neg").value(-7);
  w.key("x").value(0.25);
  w.key("inf").value(1.0 / 0.0);
  w.key("empty").begin_array().end_array();
  w.key("list").begin_array().value(true).null().begin_object().end_object().end_array();
  w.end_object();
  // JSON is YAML; yaml-cpp reads it back.
  YAML::Node n = YAML::Load(w.str());
  EXPECT_EQ(n["s"].as<std::string>(), tricky);
  EXPECT_EQ(n["n"].as<int>(), 42);
  EXPECT_EQ(n["neg"].as<int>(), -7);
  EXPECT_EQ(n["x"].as<double>(), 0.25);
  EXPECT_TRUE(n["inf"].IsNull());
  EXPECT_EQ(n["empty"].size(), 0u);
  ASSERT_EQ(n["list"].size(), 3u);
  EXPECT_TRUE(n["list"][0].as<bool>());
  EXPECT_TRUE(n["list"][1].IsNull());
  EXPECT_TRUE(n["list"][2].IsMap());
}

TEST(JsonWriter, CompactMode) {
  polygrad::JsonWriter w(0);
  w.begin_object().key("a").begin_array().value(1).value(2).end_array().end_object();
  EXPECT_EQ(w.str(), R"({"a":[1,2]})");
}

polygrad::LoadRecord refused_record() {
  polygrad::LoadRecord r;
  r.path = "/p/polygrad_x.so";
  r.source = polygrad::PluginSource::env;
  r.abi_known = true;
  r.abi_major = 2;
  r.abi_minor = 0;
  r.stage = polygrad::LoadStage::abi;
  r.reason = "plugin ABI 2.0, host ABI 1.0 (the major versions differ)";
  return r;
}

TEST(LoadReport, TextLines) {
  EXPECT_EQ(polygrad::format_record(refused_record()),
            "refused  /p/polygrad_x.so (env) ABI 2.0 at abi: plugin ABI 2.0, host ABI 1.0 (the "
            "major versions differ)");
  polygrad::LoadRecord ok;
  ok.path = "/q/polygrad_cpu.so";
  ok.source = polygrad::PluginSource::build_tree;
  ok.plugin_name = "cpu";
  ok.plugin_version = "0.1";
  ok.abi_known = true;
  ok.abi_major = 1;
  ok.status = polygrad::LoadStatus::loaded;
  ok.stage = polygrad::LoadStage::ready;
  ok.device_count = 1;
  EXPECT_EQ(polygrad::format_record(ok),
            "loaded   /q/polygrad_cpu.so (build tree) cpu 0.1 ABI 1.0: 1 device");
}

TEST(LoadReport, JsonCarriesEveryField) {
  polygrad::LoadReport report;
  report.records.push_back(refused_record());
  report.config_error = "f.yaml:1: x: bad \"quote\"";
  YAML::Node n = YAML::Load(polygrad::report_to_json(report));
  EXPECT_TRUE(n["config"].IsNull());
  EXPECT_EQ(n["config_error"].as<std::string>(), "f.yaml:1: x: bad \"quote\"");
  ASSERT_EQ(n["records"].size(), 1u);
  YAML::Node r = n["records"][0];
  EXPECT_EQ(r["path"].as<std::string>(), "/p/polygrad_x.so");
  EXPECT_EQ(r["source"].as<std::string>(), "env");
  EXPECT_EQ(r["status"].as<std::string>(), "refused");
  EXPECT_EQ(r["stage"].as<std::string>(), "abi");
  EXPECT_EQ(r["abi"].as<std::string>(), "2.0");
  EXPECT_TRUE(r["plugin"].IsNull());
  EXPECT_EQ(r["device_count"].as<int>(), 0);
  EXPECT_EQ(r["reason"].as<std::string>(), refused_record().reason);
}

}  // namespace
}  // namespace polygrad_test
