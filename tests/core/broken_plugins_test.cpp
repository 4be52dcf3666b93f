// Every broken plugin is refused (or loaded with zero devices) with its exact reason, and a
// good plugin loaded beside them stays usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

/// The ABI versions as the load report spells them: this SDK's and the broken major's.
const std::string kAbi = "1." + std::to_string(PG_PLUGIN_ABI_MINOR);
const std::string kOtherMajorAbi = "2." + std::to_string(PG_PLUGIN_ABI_MINOR);

using polygrad::LoadStage;
using polygrad::LoadStatus;
using ::testing::HasSubstr;

class BrokenPlugins : public ::testing::Test {
 protected:
  BrokenPlugins() : registry_(isolated({kBrokenDir, kTestPlugin})) {}

  const polygrad::LoadRecord& record(const std::string& kind) {
    report_ = registry_.report();
    const polygrad::LoadRecord* r = record_for(report_, broken(kind));
    if (r == nullptr) throw std::runtime_error("no record for " + broken(kind));
    return *r;
  }

  polygrad::Registry registry_;
  polygrad::LoadReport report_;
};

TEST_F(BrokenPlugins, WrongMajorIsRefusedNamingBothVersions) {
  const auto& r = record("abi_major");
  EXPECT_EQ(r.status, LoadStatus::refused);
  EXPECT_EQ(r.stage, LoadStage::abi);
  EXPECT_EQ(r.reason,
            "plugin ABI " + kOtherMajorAbi + ", host ABI " + kAbi + " (the major versions differ)");
  EXPECT_TRUE(r.abi_known);
  EXPECT_EQ(r.abi_major, 2u);
  EXPECT_EQ(r.plugin_name, "");  // nothing past the version is read under another major
}

TEST_F(BrokenPlugins, NewerMinorIsRefusedNamingBothVersions) {
  const auto& r = record("abi_minor");
  EXPECT_EQ(r.stage, LoadStage::abi);
  EXPECT_THAT(r.reason, HasSubstr("plugin ABI 1.99 is newer than host ABI " + kAbi));
  EXPECT_EQ(r.abi_minor, 99u);
}

TEST_F(BrokenPlugins, MissingEntrySymbol) {
  const auto& r = record("no_entry");
  EXPECT_EQ(r.stage, LoadStage::entry);
  EXPECT_THAT(r.reason, HasSubstr("no symbol pg_plugin_entry"));
  EXPECT_FALSE(r.abi_known);
}

TEST_F(BrokenPlugins, EntryReturningNull) {
  const auto& r = record("null_entry");
  EXPECT_EQ(r.stage, LoadStage::table);
  EXPECT_EQ(r.reason, "pg_plugin_entry returned NULL");
}

TEST_F(BrokenPlugins, InitErrorStatusAndMessage) {
  const auto& r = record("init_error");
  EXPECT_EQ(r.stage, LoadStage::init);
  EXPECT_EQ(r.reason,
            "init failed with PG_ERR_DEVICE: simulated driver failure: no broken accelerator "
            "attached");
  EXPECT_EQ(r.plugin_name, "broken_init_error");
  EXPECT_EQ(r.plugin_version, "0.0.1");
}

TEST_F(BrokenPlugins, InitThrowingAcrossTheBoundaryIsRecordedNotFatal) {
  const auto& r = record("init_throws");
  EXPECT_EQ(r.stage, LoadStage::init);
  EXPECT_EQ(r.reason, "init threw a C++ exception across the C boundary: init exploded on purpose");
}

TEST_F(BrokenPlugins, ZeroDevicesLoadsWithThePluginsReason) {
  const auto& r = record("zero_devices");
  EXPECT_EQ(r.status, LoadStatus::loaded);
  EXPECT_EQ(r.stage, LoadStage::ready);
  EXPECT_EQ(r.device_count, 0u);
  EXPECT_EQ(r.reason, "no broken accelerator present (zero devices by design)");
  try {
    registry_.device("zerodev");
    FAIL() << "zerodev has no devices";
  } catch (const polygrad::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown device 'zerodev'"));
    EXPECT_THAT(e.what(), HasSubstr("zerodev has no devices: no broken accelerator present"));
  }
}

TEST_F(BrokenPlugins, MissingRequiredSlotIsNamed) {
  const auto& r = record("missing_slot");
  EXPECT_EQ(r.stage, LoadStage::slots);
  EXPECT_EQ(r.reason, "required slots missing: renderer");
}

TEST_F(BrokenPlugins, TableSmallerThanAbi10IsRefused) {
  const auto& r = record("small_table");
  EXPECT_EQ(r.stage, LoadStage::abi);
  EXPECT_EQ(r.reason, "pg_plugin struct_size " + std::to_string(offsetof(pg_plugin, init)) +
                          " is smaller than the ABI 1.0 table (" +
                          std::to_string(offsetof(pg_plugin, compiler)) + " bytes)");
}

TEST_F(BrokenPlugins, FileThatIsNotALibraryCarriesTheDlerrorText) {
  TempDir dir;
  std::string garbage = dir.write("polygrad_garbage.so", "this is not an ELF file");
  polygrad::LoadRecord r = registry_.load(garbage);
  EXPECT_EQ(r.status, LoadStatus::refused);
  EXPECT_EQ(r.stage, LoadStage::open);
  // dlerror names the file it could not map.
  EXPECT_THAT(r.reason, HasSubstr("polygrad_garbage.so:"));
}

TEST_F(BrokenPlugins, GoodPluginStaysUsable) {
  polygrad::LoadReport report = registry_.report();
  int refused = 0, loaded = 0;
  for (const auto& r : report.records) (r.loaded() ? loaded : refused)++;
  EXPECT_EQ(refused, 8);  // all but zero_devices
  EXPECT_EQ(loaded, 2);   // zero_devices and test_host
  polygrad::Device d = registry_.device("testdev");
  polygrad::Buffer b = d.alloc(8);
  const double in = 2.5;
  double out = 0;
  d.copy_in(b, &in, sizeof(in));
  d.copy_out(&out, b, sizeof(out));
  EXPECT_EQ(out, 2.5);
}

TEST_F(BrokenPlugins, TextReportHasOneLinePerCandidate) {
  polygrad::LoadReport report = registry_.report();
  std::string text = polygrad::format_report(report);
  EXPECT_EQ(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')), report.records.size());
  EXPECT_THAT(text, HasSubstr("refused  " + fs::weakly_canonical(broken("abi_major")).string() +
                              " (api) ABI " + kOtherMajorAbi + " at abi: plugin ABI " +
                              kOtherMajorAbi + ", host ABI " + kAbi));
  EXPECT_THAT(text, HasSubstr("test_host 1.2.3 ABI " + kAbi + ": 2 devices"));
}

}  // namespace
}  // namespace polygrad_test
