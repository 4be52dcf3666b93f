// support::side_by_side: every job once, errors after all jobs, nesting, and a child of fork.
#include "support/side_by_side.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace polygrad::support {
namespace {

TEST(SideBySide, RunsEveryJobOnce) {
  for (size_t n : {0, 1, 2, 7, 64}) {
    std::vector<std::atomic<int>> runs(n);
    side_by_side(n, [&](size_t i) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      runs[i].fetch_add(1);
    });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << "job " << i << " of " << n;
  }
}

/// How many threads ran 8 jobs that each wait (up to a second) until two have started, so
/// that a second thread must take one, and whether a helper was among them.
struct Spread {
  size_t threads = 0;
  bool helper = false;
};
Spread spread_of_eight_jobs() {
  std::mutex mu;
  std::set<std::thread::id> threads;
  bool helper = false;
  std::atomic<int> started{0};
  side_by_side(8, [&](size_t) {
    started.fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (started.load() < 2 && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    std::lock_guard<std::mutex> lock(mu);
    threads.insert(std::this_thread::get_id());
    helper = helper || on_helper_thread();
  });
  return {threads.size(), helper};
}

TEST(SideBySide, HelpersTakeJobsWhereThereAreSeveralHardwareThreads) {
  if (std::thread::hardware_concurrency() < 2)
    GTEST_SKIP() << "one hardware thread: the calling thread runs every job";
  const Spread spread = spread_of_eight_jobs();
  EXPECT_GE(spread.threads, 2u);
  EXPECT_TRUE(spread.helper);
  EXPECT_FALSE(on_helper_thread());
}

TEST(SideBySide, FirstErrorIsRaisedAfterEveryJobRan) {
  std::vector<std::atomic<int>> runs(10);
  try {
    side_by_side(10, [&](size_t i) {
      runs[i].fetch_add(1);
      if (i == 3 || i == 7) throw std::runtime_error("job " + std::to_string(i) + " failed");
    });
    FAIL() << "no error raised";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "job 3 failed");
  }
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "job " << i;
}

TEST(SideBySide, JobsMayRunJobsSideBySide) {
  std::atomic<int> total{0};
  side_by_side(4, [&](size_t i) {
    side_by_side(5, [&](size_t j) { total.fetch_add(static_cast<int>(10 * i + j)); });
  });
  int want = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) want += 10 * i + j;
  EXPECT_EQ(total.load(), want);
}

// A child of fork has none of its parent's helpers: it starts its own (the pool's state is
// made anew in the child) and its jobs run on them too.
TEST(SideBySide, ChildOfForkStartsItsOwnHelpers) {
  if (std::thread::hardware_concurrency() < 2)
    GTEST_SKIP() << "one hardware thread: there are no helpers";
  ASSERT_TRUE(spread_of_eight_jobs().helper);  // the parent's helpers exist now
  const pid_t pid = fork();
  ASSERT_NE(pid, -1);
  if (pid == 0) _exit(spread_of_eight_jobs().helper ? 0 : 1);
  int status = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  pid_t got = 0;
  while ((got = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (got == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the child did not finish its jobs in 30 s";
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "no helper took a job in the child";
}

}  // namespace
}  // namespace polygrad::support
