// Several threads resolving devices at once, the first use racing discovery itself.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

TEST(RegistryThreads, ConcurrentFirstUseDiscoversOnceAndResolvesConsistently) {
  polygrad::Registry registry(isolated({kBrokenDir, kTestPlugin}));
  constexpr int kThreads = 8, kRounds = 50;
  std::vector<pg_device_t> handles[2];
  std::mutex mutex;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < kRounds; ++r) {
          int index = (t + r) % 2;
          polygrad::Device d = registry.device(index == 0 ? "testdev" : "testdev:1");
          polygrad::Buffer b = d.alloc(sizeof(int));
          int in = t * 1000 + r, out = -1;
          d.copy_in(b, &in, sizeof(in));
          d.copy_out(&out, b, sizeof(out));
          if (out != in) ++failures;
          std::lock_guard lock(mutex);
          handles[index].push_back(d.handle());
        }
      } catch (...) {
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  // Discovery ran once: one record per candidate, 9 broken plugins plus test_host.
  EXPECT_EQ(registry.report().records.size(), 10u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(handles[i].size(), static_cast<size_t>(kThreads * kRounds / 2));
    for (pg_device_t h : handles[i]) EXPECT_EQ(h, handles[i].front());
  }
  EXPECT_NE(handles[0].front(), handles[1].front());
}

}  // namespace
}  // namespace polygrad_test
