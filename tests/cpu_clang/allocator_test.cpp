// Allocator role and device properties.
#include <gtest/gtest.h>

#include <thread>

#include "harness.hpp"

namespace polygrad::test {
namespace {

TEST(CpuClangAllocator, AlignedZeroSizeAndBoundsChecked) {
  Plugin p(Options{{"cache", "false"}});
  const pg_allocator_api& a = *p.table().allocator;
  EXPECT_EQ(a.alignment, 64u);
  ASSERT_NE(a.host_pointer, nullptr);
  ASSERT_NE(a.copy_device, nullptr);

  pg_buffer_t zero1 = p.alloc(0), zero2 = p.alloc(0);
  EXPECT_NE(zero1, nullptr);
  EXPECT_NE(zero1, zero2);  // unique handles
  pg_error err{};
  EXPECT_EQ(a.copy_in(p.device(), zero1, 0, nullptr, 0, &err), PG_OK);

  pg_buffer_t b = p.alloc(100);
  auto address = reinterpret_cast<uintptr_t>(a.host_pointer(p.device(), b));
  EXPECT_EQ(address % 64, 0u);
  std::vector<uint8_t> data(100);
  for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(k * 3);
  p.copy_in(b, data.data(), data.size());

  // Past the end: offset + n > size.
  EXPECT_EQ(a.copy_in(p.device(), b, 60, data.data(), 41, &err), PG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("outside the buffer of 100 bytes"), std::string::npos)
      << err.message;
  uint8_t sink[8];
  EXPECT_EQ(a.copy_out(p.device(), sink, b, UINT64_MAX - 2, 8, &err), PG_ERR_INVALID_ARGUMENT);

  // Device-to-device copy with offsets.
  pg_buffer_t c = p.alloc(100);
  p.copy_in(c, std::vector<uint8_t>(100, 0xEE).data(), 100);
  ASSERT_EQ(a.copy_device(p.device(), c, 10, b, 20, 30, &err), PG_OK) << err.message;
  EXPECT_EQ(a.copy_device(p.device(), c, 90, b, 0, 11, &err), PG_ERR_INVALID_ARGUMENT);
  auto got = p.download<uint8_t>(c, 100);
  for (size_t k = 0; k < 100; ++k) EXPECT_EQ(got[k], k >= 10 && k < 40 ? data[k + 10] : 0xEE) << k;

  for (auto x : {zero1, zero2, b, c}) p.free(x);
}

TEST(CpuClangAllocator, LargeBuffersStartOnAHugePageBoundary) {
  // From 4 MiB a buffer starts on a 2 MiB boundary, where the kernel can back it with huge
  // pages (it is asked to); below, the 64-byte alignment. Both hold what is copied in.
  Plugin p(Options{{"cache", "false"}});
  const pg_allocator_api& a = *p.table().allocator;
  for (const uint64_t bytes : {uint64_t{4} << 20, (uint64_t{9} << 20) + 12}) {
    pg_buffer_t b = p.alloc(bytes);
    const auto address = reinterpret_cast<uintptr_t>(a.host_pointer(p.device(), b));
    EXPECT_EQ(address % (uintptr_t{2} << 20), 0u) << bytes;
    std::vector<uint8_t> data(bytes);
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(k * 7 + k / 4096);
    p.copy_in(b, data.data(), data.size());
    EXPECT_EQ(p.download<uint8_t>(b, bytes), data) << bytes;
    p.free(b);
  }
  pg_buffer_t small = p.alloc((uint64_t{4} << 20) - 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.host_pointer(p.device(), small)) % 64, 0u);
  p.free(small);
}

TEST(CpuClangAllocator, PropertiesDescribeTheHost) {
  Plugin p(Options{{"cache", "false"}, {"threads", "1"}});
  pg_device_properties props{};
  props.struct_size = sizeof(props);
  props.caps.struct_size = sizeof(props.caps);
  pg_error err{};
  ASSERT_EQ(p.table().device_properties(p.device(), &props, &err), PG_OK) << err.message;
  EXPECT_GT(std::string(props.name).size(), 0u);
  std::string target = props.target;
  EXPECT_NE(target.find('-'), std::string::npos) << target;
  EXPECT_EQ(props.caps.compute_units, 1u);
  EXPECT_TRUE(props.caps.vector_width_bytes == 16 || props.caps.vector_width_bytes == 32 ||
              props.caps.vector_width_bytes == 64);
  EXPECT_EQ(props.caps.max_vector_lanes, 16u);
  EXPECT_TRUE(props.caps.flags & PG_CAP_HOST_MEMORY);
  // Every dtype but VOID.
  EXPECT_EQ(props.caps.dtype_mask, ((uint64_t{1} << PG_DTYPE_COUNT) - 1) & ~uint64_t{1});
  EXPECT_EQ(p.table().abi_major, static_cast<uint32_t>(PG_PLUGIN_ABI_MAJOR));
  EXPECT_STREQ(p.table().name, "cpu_clang");
  EXPECT_STREQ(p.table().device_prefix, "cpu");
  EXPECT_EQ(p.table().renderer->format, static_cast<uint32_t>(PG_ARTIFACT_C_SOURCE));
}

TEST(CpuClangAllocator, OptionSchemaDeclaresTheFiveOptions) {
  Plugin p(Options{{"cache", "false"}});
  std::map<std::string, pg_option_type> want = {{"threads", PG_OPTION_INT},
                                                {"cache_dir", PG_OPTION_STRING},
                                                {"cache", PG_OPTION_BOOL},
                                                {"opt_level", PG_OPTION_INT},
                                                {"count", PG_OPTION_INT}};
  ASSERT_EQ(p.table().option_count, want.size());
  for (uint32_t k = 0; k < p.table().option_count; ++k) {
    const pg_option_desc& o = p.table().options[k];
    ASSERT_TRUE(want.count(o.key)) << o.key;
    EXPECT_EQ(o.type, want[o.key]) << o.key;
  }
}

TEST(CpuClangAllocator, CountOffersDevicesWithMemoryOfTheirOwn) {
  Plugin one(Options{{"cache", "false"}});
  const pg_plugin& t = one.table();
  uint32_t count = 0;
  pg_error err;
  ASSERT_EQ(t.device_count(one.state(), &count, &err), PG_OK);
  EXPECT_EQ(count, 1u);
  Plugin p(Options{{"cache", "false"}, {"count", "3"}});
  ASSERT_EQ(t.device_count(p.state(), &count, &err), PG_OK);
  EXPECT_EQ(count, 3u);
  pg_device_t d2 = nullptr, again = nullptr;
  ASSERT_EQ(t.device_open(p.state(), 2, &d2, &err), PG_OK) << err.message;
  ASSERT_EQ(t.device_open(p.state(), 2, &again, &err), PG_OK) << err.message;
  EXPECT_EQ(d2, again);  // opening an index twice gives the same device
  EXPECT_NE(d2, p.device());
  // A buffer of device 2 holds its own bytes.
  pg_buffer_t b = nullptr;
  ASSERT_EQ(t.allocator->alloc(d2, 16, &b, &err), PG_OK) << err.message;
  const int32_t in[4] = {7, -1, 42, 5};
  int32_t out[4] = {};
  ASSERT_EQ(t.allocator->copy_in(d2, b, 0, in, sizeof(in), &err), PG_OK);
  ASSERT_EQ(t.allocator->copy_out(d2, out, b, 0, sizeof(out), &err), PG_OK);
  EXPECT_EQ(std::vector<int32_t>(out, out + 4), std::vector<int32_t>(in, in + 4));
  t.allocator->free(d2, b);
}

}  // namespace
}  // namespace polygrad::test
