// Fuzz target: bytes -> random int32 expression -> simplify; the simplified expression must
// evaluate equal at sampled points and both sides' bounds must contain the values.
// With -DPOLYGRAD_FUZZ=ON and clang, links libFuzzer; otherwise main() below runs a fixed
// number of seeded inputs (see docs/fuzzing.md).
#include "expr_gen.hpp"
#include "ir/graph.hpp"
#include "symbolic/bounds.hpp"
#include "symbolic/simplify.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>

namespace {

void fail(const char* what, const polygrad::UOpRef& e, const polygrad::UOpRef& s) {
  std::fprintf(stderr, "fuzz_simplify: %s\ninput:\n%s\nsimplified:\n%s", what,
               polygrad::to_string(e).c_str(), polygrad::to_string(s).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace polygrad;
  if (size < 2) return 0;
  testing::ByteSource in(data + 1, size - 1);
  UOpRef e = testing::gen_expr(in, 2 + data[0] % 5);
  UOpRef s = simplify(e);
  verify(s);
  auto be = bounds(e), bs = bounds(s);
  if (!be || !bs) fail("no bounds", e, s);
  // Corners and a few points chosen by the input itself.
  for (int p = 0; p < 12; ++p) {
    std::map<std::string, int64_t> env;
    int k = 0;
    for (const auto& v : testing::kVars) {
      int64_t span = v.hi - v.lo + 1;
      int64_t pick = p < 8 ? ((p >> k) & 1) * (span - 1) : in.next() % span;
      env[v.name] = v.lo + pick;
      ++k;
    }
    int64_t want = testing::eval_expr(*e, env), got = testing::eval_expr(*s, env);
    if (want != got) fail("value changed", e, s);
    if (want < be->lo || want > be->hi) fail("input bounds miss a value", e, s);
    if (got < bs->lo || got > bs->hi) fail("simplified bounds miss a value", e, s);
  }
  return 0;
}

#ifndef POLYGRAD_LIBFUZZER
// Standalone driver: N seeded random inputs (default 20000, or argv[1]).
int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 20000;
  std::mt19937 rng(argc > 2 ? std::atoi(argv[2]) : 42);
  std::vector<uint8_t> bytes;
  for (long i = 0; i < n; ++i) {
    bytes.resize(8 + rng() % 120);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("fuzz_simplify: %ld inputs, no mismatch\n", n);
  return 0;
}
#endif
