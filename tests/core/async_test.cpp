// Streams, events and pinned memory (SDK 1.3 pg_async_api) through polygrad::Stream on
// test_host, whose async table the SDK helper builds: ordering across streams, peer copies
// between its two devices, errors of enqueued kernels named at synchronize, and the blocking
// fallback of a device without async work.
#include <polygrad/program_builder.hpp>
#include <polygrad/stream.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

using ::testing::HasSubstr;

/// out[i] = x[i] * 2 + 1 (float32).
polygrad::sdk::ProgramBuilder twice_plus_one(const char* name = "twice_plus_one") {
  polygrad::sdk::ProgramBuilder b(name);
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto v = b.load(b.index(x, i));
  b.store(b.index(out, i), b.ternary(PG_OP_MULACC, v, b.const_f(PG_DTYPE_FLOAT32, 2.0),
                                     b.const_f(PG_DTYPE_FLOAT32, 1.0)));
  return b;
}

polygrad::LaunchArgs args_of(const polygrad::Buffer& out, const polygrad::Buffer& in, uint32_t n) {
  polygrad::LaunchArgs a;
  a.buffers = {&out, &in};
  a.global_size = {n, 1, 1};
  return a;
}

class AsyncTest : public ::testing::Test {
 protected:
  AsyncTest()
      : registry_(isolated({kTestPlugin})),
        dev0_(registry_.device("testdev:0")),
        dev1_(registry_.device("testdev:1")) {}
  polygrad::Registry registry_;
  polygrad::Device dev0_, dev1_;
};

TEST_F(AsyncTest, TwoStreamsMeetAtAnEvent) {
  ASSERT_TRUE(dev0_.has_async());
  EXPECT_TRUE(dev0_.properties().caps.flags & PG_CAP_ASYNC);
  constexpr uint32_t n = 1000;
  polygrad::PinnedMemory in = dev0_.alloc_pinned(n * 4), out = dev0_.alloc_pinned(n * 4);
  EXPECT_TRUE(in.pinned());
  auto* x = static_cast<float*>(in.data());
  std::iota(x, x + n, -500.0f);
  polygrad::Buffer a = dev0_.alloc(n * 4), b = dev0_.alloc(n * 4), c = dev0_.alloc(n * 4);
  polygrad::sdk::ProgramBuilder kp = twice_plus_one("produce"), kc = twice_plus_one("consume");
  polygrad::Program produce = dev0_.load(dev0_.render(kp.program()), kp.program());
  polygrad::Program consume = dev0_.load(dev0_.render(kc.program()), kc.program());

  polygrad::Stream s1 = dev0_.create_stream(), s2 = dev0_.create_stream();
  ASSERT_TRUE(s1.asynchronous());
  polygrad::Event produced = dev0_.create_event();
  // The producer waits 100 ms before it runs: s2's consumer, were it not held at the event,
  // would read b before s1 writes it.
  ScopedEnv slow("POLYGRAD_TEST_HOST_SLOW", "produce:100");
  s1.copy_in(a, x, n * 4);
  s1.launch(produce, args_of(b, a, n));  // b = 2a + 1
  s1.record(produced);
  s2.wait(produced);
  s2.launch(consume, args_of(c, b, n));  // c = 2b + 1 = 4a + 3, only after s1's work
  s2.copy_out(out.data(), c, n * 4);
  s2.synchronize();
  produced.synchronize();
  const auto* y = static_cast<const float*>(out.data());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 4 * x[i] + 3) << i;
}

TEST_F(AsyncTest, PeerCopyBetweenTwoDevicesOfThePlugin) {
  const std::vector<float> x = {1, -2, 3.5f, 8};
  polygrad::Buffer src = dev0_.alloc(16), dst = dev1_.alloc(16), out = dev1_.alloc(16);
  polygrad::Stream s0 = dev0_.create_stream(), s1 = dev1_.create_stream();
  polygrad::Event copied = dev0_.create_event();
  s0.copy_in(src, x.data(), 16);
  s0.record(copied);
  s1.wait(copied);
  s1.copy_from(dst, src, 16);  // testdev:0 -> testdev:1 on testdev:1's stream
  polygrad::sdk::ProgramBuilder k = twice_plus_one();
  polygrad::Program p = dev1_.load(dev1_.render(k.program()), k.program());
  s1.launch(p, args_of(out, dst, 4));
  std::vector<float> y(4);
  s1.copy_out(y.data(), out, 16);
  s1.synchronize();
  EXPECT_EQ(y, (std::vector<float>{3, -3, 8, 17}));
}

TEST_F(AsyncTest, AFailingKernelIsNamedAtSynchronizeAndTheStreamGoesOn) {
  polygrad::sdk::ProgramBuilder k = twice_plus_one("reads_too_far");
  polygrad::Program p = dev0_.load(dev0_.render(k.program()), k.program());
  polygrad::Buffer small = dev0_.alloc(4), out = dev0_.alloc(16);
  polygrad::Stream s = dev0_.create_stream();
  std::vector<float> y(4, -1.0f);
  s.launch(p, args_of(out, small, 4));  // reads 4 floats of a 1-float buffer: fails on the stream
  s.copy_out(y.data(), out, 16);        // skipped: it depends on the failed launch
  const std::string message = error_of([&] { s.synchronize(); });
  EXPECT_THAT(message, HasSubstr("[stream_synchronize] testdev:0 (plugin test_host): "
                                 "PG_ERR_LAUNCH: kernel 'reads_too_far' failed: "));
  EXPECT_THAT(message, HasSubstr("(1 later item of the stream skipped)"));
  EXPECT_EQ(y, std::vector<float>(4, -1.0f));
  // Reported once; the stream then runs new work.
  const float one = 1.0f;
  polygrad::Buffer in = dev0_.alloc(4);
  s.copy_in(in, &one, 4);
  s.launch(p, args_of(out, in, 1));
  s.copy_out(y.data(), out, 4);
  s.synchronize();
  EXPECT_EQ(y[0], 3.0f);
  // loader->synchronize covers the device's streams too.
  s.launch(p, args_of(out, small, 4));
  EXPECT_THAT(error_of([&] { dev0_.synchronize(); }), HasSubstr("kernel 'reads_too_far' failed: "));
}

#ifdef PG_CPU_CLANG
TEST(AsyncFallback, CpuClangStreamsAndCrossPluginCopies) {
  polygrad::Registry registry(isolated({PG_CPU_CLANG, kTestPlugin}));
  polygrad::Device cpu = registry.device("cpu"), test = registry.device("testdev");
  ASSERT_TRUE(cpu.has_async());
  const std::vector<float> x = {0.5f, 1, 2, 4};
  polygrad::Buffer a = cpu.alloc(16), b = cpu.alloc(16), t = test.alloc(16);
  polygrad::sdk::ProgramBuilder k = twice_plus_one();
  polygrad::Program p = cpu.load(cpu.render(k.program()), k.program());
  polygrad::Stream s = cpu.create_stream();
  s.copy_in(a, x.data(), 16);
  s.launch(p, args_of(b, a, 4));
  s.synchronize();
  // cpu -> testdev: another plugin, staged through the source plugin's pinned memory.
  polygrad::Stream st = test.create_stream();
  st.copy_from(t, b, 16);
  std::vector<float> y(4);
  st.copy_out(y.data(), t, 16);
  st.synchronize();
  EXPECT_EQ(y, (std::vector<float>{2, 3, 5, 9}));
}
#endif

TEST(AsyncFallback, ADeviceWithoutAsyncRunsEachItemAtOnce) {
  // test_isa1 is built without the async table (as a plugin from before SDK 1.3 is).
  polygrad::Registry registry(isolated({PG_TEST_ISA1_PLUGIN, kTestPlugin}));
  polygrad::Device old = registry.device("isaone");
  EXPECT_FALSE(old.has_async());
  EXPECT_FALSE(old.properties().caps.flags & PG_CAP_ASYNC);
  polygrad::Stream s = old.create_stream();
  EXPECT_FALSE(s.asynchronous());
  polygrad::PinnedMemory host = old.alloc_pinned(16);
  EXPECT_FALSE(host.pinned());
  const std::vector<float> x = {1, 2, 3, 4};
  polygrad::Buffer a = old.alloc(16), b = old.alloc(16);
  polygrad::sdk::ProgramBuilder k = twice_plus_one();
  k.set_isa_version(1);
  polygrad::Program p = old.load(old.render(k.program()), k.program());
  polygrad::Event e = old.create_event();
  s.copy_in(a, x.data(), 16);
  s.launch(p, args_of(b, a, 4));
  s.record(e);
  s.wait(e);
  s.copy_out(host.data(), b, 16);
  e.synchronize();
  s.synchronize();
  const auto* y = static_cast<const float*>(host.data());
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{3, 5, 7, 9}));
  // An event of another device is refused by name.
  polygrad::Event other = registry.device("testdev:1").create_event();
  EXPECT_EQ(error_of([&] { s.record(other); }),
            "[event_record] isaone:0: the event belongs to testdev:1");
}

}  // namespace
}  // namespace polygrad_test
