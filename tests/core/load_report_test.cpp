// The text and JSON renderings of a load report, and the JSON's escaping.
#include <polygrad/load_report.hpp>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace polygrad_test {
namespace {

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

TEST(LoadReport, JsonEscapesEveryCharacterJsonRequires) {
  polygrad::LoadReport report;
  polygrad::LoadRecord r = refused_record();
  r.reason = std::string("quote\" backslash\\ newline\n tab\t ctl\x01\x1f caf\xc3\xa9 end");
  report.records.push_back(r);
  const std::string text = polygrad::report_to_json(report, 0);
  // RFC 8259: quote, backslash and control characters escaped, UTF-8 passed through.
  EXPECT_NE(text.find(R"("reason":"quote\" backslash\\ newline\n tab\t ctl\u0001\u001f caf)"
                      "\xc3\xa9 end\""),
            std::string::npos)
      << text;
  YAML::Node n = YAML::Load(text);  // JSON is YAML; yaml-cpp reads it back
  EXPECT_EQ(n["records"][0]["reason"].as<std::string>(), r.reason);
}

TEST(LoadReport, JsonCompactAndIndented) {
  polygrad::LoadReport report;
  EXPECT_EQ(polygrad::report_to_json(report, 0),
            R"({"config":null,"config_error":null,"records":[]})");
  EXPECT_EQ(polygrad::report_to_json(report),
            "{\n  \"config\": null,\n  \"config_error\": null,\n  \"records\": []\n}");
}

TEST(LoadReport, JsonReplacesBytesThatAreNotUtf8) {
  polygrad::LoadReport report;
  polygrad::LoadRecord r = refused_record();
  r.path = "/p/bad\xff.so";
  report.records.push_back(r);
  YAML::Node n = YAML::Load(polygrad::report_to_json(report));
  EXPECT_EQ(n["records"][0]["path"].as<std::string>(), "/p/bad\xef\xbf\xbd.so");
}

}  // namespace
}  // namespace polygrad_test
