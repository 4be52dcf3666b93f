// POLYGRAD_TIMING: per-phase totals, printed at exit.
#include "support/phase_timing.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace polygrad::timing {

namespace {

constexpr size_t kPhases = static_cast<size_t>(Phase::count);

constexpr std::array<const char*, kPhases> kNames = {
#define POLYGRAD_PHASE_NAME(name) #name,
    POLYGRAD_PHASES(POLYGRAD_PHASE_NAME)
#undef POLYGRAD_PHASE_NAME
};

struct Totals {
  std::array<std::atomic<int64_t>, kPhases> ns{};
  std::array<std::atomic<int64_t>, kPhases> calls{};
};

Totals& totals() {
  static auto* t = new Totals;  // never destroyed: read by the exit handler
  return *t;
}

void print_totals() {
  Totals& t = totals();
  for (size_t i = 0; i < kPhases; ++i) {
    const int64_t calls = t.calls[i].load(std::memory_order_relaxed);
    if (calls == 0) continue;
    std::fprintf(stderr, "polygrad: time %-12s %10.3f ms %8lld calls\n", kNames[i],
                 static_cast<double>(t.ns[i].load(std::memory_order_relaxed)) * 1e-6,
                 static_cast<long long>(calls));
  }
}

}  // namespace

bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("POLYGRAD_TIMING");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0) return false;
    totals();
    std::atexit(print_totals);
    return true;
  }();
  return on;
}

void record(Phase phase, int64_t ns) {
  Totals& t = totals();
  const auto i = static_cast<size_t>(phase);
  t.ns[i].fetch_add(ns, std::memory_order_relaxed);
  t.calls[i].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace polygrad::timing
