// Allocator: zero-size and odd-size round trips, a 64 MiB buffer, offsets, alignment through
// host_pointer, copy_device, wrap_host, and out-of-bounds copies that must fail cleanly.
#include <cstring>
#include <limits>

#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

/// A device buffer freed when it goes out of scope.
class OwnedBuffer {
 public:
  OwnedBuffer(const Session& s, uint64_t nbytes) : s_(s) { result_ = s.alloc(nbytes, &handle_); }
  ~OwnedBuffer() {
    if (handle_) s_.free(handle_);
  }
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;
  bool ok() const { return result_.ok() && handle_ != nullptr; }
  const CallResult& result() const { return result_; }
  pg_buffer_t get() const { return handle_; }

 private:
  const Session& s_;
  pg_buffer_t handle_ = nullptr;
  CallResult result_;
};

std::vector<unsigned char> pattern(size_t n, uint32_t seed) {
  std::vector<unsigned char> bytes(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t k = 0; k < n; ++k) {
    x = x * 1664525u + 1013904223u;
    bytes[k] = static_cast<unsigned char>(x >> 24);
  }
  return bytes;
}

/// "" when equal, else where they first differ.
std::string compare(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want) {
  for (size_t k = 0; k < want.size(); ++k)
    if (got[k] != want[k])
      return "byte " + std::to_string(k) + " is " + std::to_string(got[k]) + ", wrote " +
             std::to_string(want[k]);
  return "";
}

void round_trip(const Session& s, Suite& suite, const std::string& check, uint64_t n) {
  OwnedBuffer b(s, n);
  if (!suite.expect(b.ok(), check, "alloc(" + std::to_string(n) + "): " + b.result().describe()))
    return;
  std::vector<unsigned char> in = pattern(n, static_cast<uint32_t>(n)), out(n, 0);
  CallResult r = s.copy_in(b.get(), 0, in.data(), n);
  if (!suite.expect(r.ok(), check, "copy_in: " + r.describe())) return;
  r = s.copy_out(out.data(), b.get(), 0, n);
  if (!suite.expect(r.ok(), check, "copy_out: " + r.describe())) return;
  std::string diff = compare(out, in);
  suite.expect(diff.empty(), check, diff);
}

void check_zero_size(const Session& s, Suite& suite) {
  OwnedBuffer a(s, 0), b(s, 0);
  suite.expect(a.ok() && b.ok() && a.get() != b.get(), "alloc.zero_size",
               "alloc(0) must give valid, distinct handles (" + a.result().describe() + ")");
  if (!a.ok()) return;
  expect_ok(suite, "copy_in.zero_bytes", s.copy_in(a.get(), 0, nullptr, 0));
  expect_ok(suite, "copy_out.zero_bytes", s.copy_out(nullptr, a.get(), 0, 0));
}

void check_offsets(const Session& s, Suite& suite) {
  const uint64_t n = 64;
  OwnedBuffer b(s, n);
  if (!suite.expect(b.ok(), "offsets", "alloc: " + b.result().describe())) return;
  std::vector<unsigned char> whole = pattern(n, 7), patch = pattern(7, 9), out(n, 0);
  CallResult r = s.copy_in(b.get(), 0, whole.data(), n);
  if (r.ok()) r = s.copy_in(b.get(), 5, patch.data(), patch.size());
  if (r.ok()) r = s.copy_in(b.get(), n - 1, patch.data(), 1);  // the very last byte
  if (r.ok()) r = s.copy_out(out.data(), b.get(), 0, n);
  if (!suite.expect(r.ok(), "offsets.copy_in", r.describe())) return;
  std::memcpy(whole.data() + 5, patch.data(), patch.size());
  whole[n - 1] = patch[0];
  std::string diff = compare(out, whole);
  suite.expect(diff.empty(), "offsets.copy_in", diff);
  std::vector<unsigned char> part(20, 0);
  r = s.copy_out(part.data(), b.get(), 9, part.size());
  if (!suite.expect(r.ok(), "offsets.copy_out", r.describe())) return;
  diff = compare(part, std::vector<unsigned char>(whole.begin() + 9, whole.begin() + 29));
  suite.expect(diff.empty(), "offsets.copy_out", diff);
}

void check_alignment(const Session& s, Suite& suite) {
  if (!s.has_host_pointer()) {
    suite.skip("alignment", "no host_pointer: the alignment cannot be observed");
    return;
  }
  uint32_t alignment = s.allocator()->alignment;
  std::string problems;
  for (uint64_t n :
       {uint64_t{1}, uint64_t{3}, uint64_t{17}, uint64_t{100}, uint64_t{4096}, uint64_t{1} << 20}) {
    OwnedBuffer b(s, n);
    if (!b.ok()) {
      problems += " alloc(" + std::to_string(n) + ") failed;";
      continue;
    }
    std::vector<unsigned char> in = pattern(n, 3);
    CallResult r = s.copy_in(b.get(), 0, in.data(), n);
    void* p = nullptr;
    try {
      p = s.allocator()->host_pointer(s.device(), b.get());
    } catch (...) {
      problems += " host_pointer threw;";
      continue;
    }
    if (p == nullptr) {
      problems += " host_pointer(" + std::to_string(n) + " bytes) is NULL;";
    } else if (reinterpret_cast<uintptr_t>(p) % alignment != 0) {
      problems += " a " + std::to_string(n) + "-byte buffer is not " + std::to_string(alignment) +
                  "-aligned;";
    } else if (!r.ok() || std::memcmp(p, in.data(), n) != 0) {
      problems += " host_pointer does not show the copied bytes;";
    }
  }
  suite.expect(problems.empty(), "alignment",
               "declared alignment " + std::to_string(alignment) + ":" + problems);
}

void check_copy_device(const Session& s, Suite& suite) {
  if (!s.has_copy_device()) {
    suite.skip("copy_device", "optional slot absent");
    return;
  }
  const uint64_t n = 32;
  OwnedBuffer a(s, n), b(s, n);
  if (!suite.expect(a.ok() && b.ok(), "copy_device", "alloc failed")) return;
  std::vector<unsigned char> pa = pattern(n, 1), pb = pattern(n, 2), out(n, 0);
  CallResult r = s.copy_in(a.get(), 0, pa.data(), n);
  if (r.ok()) r = s.copy_in(b.get(), 0, pb.data(), n);
  if (r.ok())
    r = guarded([&](pg_error* e) {
      return s.allocator()->copy_device(s.device(), b.get(), 4, a.get(), 8, 16, e);
    });
  if (r.ok()) r = s.copy_out(out.data(), b.get(), 0, n);
  if (!suite.expect(r.ok(), "copy_device", r.describe())) return;
  std::memcpy(pb.data() + 4, pa.data() + 8, 16);
  std::string diff = compare(out, pb);
  suite.expect(diff.empty(), "copy_device", diff);
  r = guarded([&](pg_error* e) {
    return s.allocator()->copy_device(s.device(), b.get(), 20, a.get(), 0, 16, e);
  });
  expect_error(suite, "copy_device.out_of_bounds", r);
}

// A wrapped buffer is the host's memory: copy_out reads it, copy_in writes it, and free
// leaves it alone.
void check_wrap_host(const Session& s, Suite& suite) {
  if (!s.has_wrap_host()) {
    suite.skip("wrap_host", "optional slot absent");
    return;
  }
  const uint64_t n = 64;
  alignas(64) unsigned char host[n];
  std::vector<unsigned char> before = pattern(n, 4), in = pattern(16, 5), out(n, 0);
  std::memcpy(host, before.data(), n);
  pg_buffer_t b = nullptr;
  CallResult r =
      guarded([&](pg_error* e) { return s.allocator()->wrap_host(s.device(), host, n, &b, e); });
  if (r.status == PG_ERR_UNSUPPORTED) {
    suite.skip("wrap_host", "the plugin cannot wrap 64-byte aligned host memory");
    return;
  }
  if (!suite.expect(r.ok() && b != nullptr, "wrap_host", r.describe())) return;
  r = s.copy_out(out.data(), b, 0, n);
  if (r.ok()) r = s.copy_in(b, 8, in.data(), in.size());
  s.free(b);
  if (!suite.expect(r.ok(), "wrap_host", r.describe())) return;
  std::string diff = compare(out, before);
  std::memcpy(before.data() + 8, in.data(), in.size());
  if (diff.empty()) diff = compare(std::vector<unsigned char>(host, host + n), before);
  suite.expect(diff.empty(), "wrap_host", diff);
}

void check_bounds(const Session& s, Suite& suite) {
  const uint64_t n = 16;
  OwnedBuffer b(s, n);
  if (!suite.expect(b.ok(), "bounds", "alloc: " + b.result().describe())) return;
  std::vector<unsigned char> bytes(64, 1);
  const uint64_t huge = std::numeric_limits<uint64_t>::max() - 2;
  expect_error(suite, "copy_in.past_end", s.copy_in(b.get(), 10, bytes.data(), 10));
  expect_error(suite, "copy_in.offset_overflow", s.copy_in(b.get(), huge, bytes.data(), 8));
  expect_error(suite, "copy_out.past_end", s.copy_out(bytes.data(), b.get(), 0, n + 1));
  expect_error(suite, "copy_out.offset_at_end", s.copy_out(bytes.data(), b.get(), n, 1));
  expect_error(suite, "copy_out.offset_overflow", s.copy_out(bytes.data(), b.get(), huge, 8));
}

}  // namespace

void run_allocator_suite(const Session& s, Suite& suite) {
  check_zero_size(s, suite);
  for (uint64_t n : {1, 3, 7, 13, 1000, 4097, 65537})
    round_trip(s, suite, "round_trip." + std::to_string(n) + "B", n);
  round_trip(s, suite, "round_trip.64MiB", uint64_t{64} << 20);
  check_offsets(s, suite);
  check_alignment(s, suite);
  check_copy_device(s, suite);
  check_wrap_host(s, suite);
  check_bounds(s, suite);
  s.free(nullptr);  // must be ignored
  suite.pass("free.null");
  std::vector<pg_buffer_t> many(100, nullptr);
  bool distinct = true;
  for (size_t k = 0; k < many.size(); ++k) {
    distinct = distinct && s.alloc(1024, &many[k]).ok() && many[k] != nullptr;
    for (size_t j = 0; distinct && j < k; ++j) distinct = many[j] != many[k];
  }
  for (pg_buffer_t h : many)
    if (h) s.free(h);
  suite.expect(distinct, "alloc.many_distinct", "100 live allocations must have distinct handles");
}

}  // namespace polygrad::conformance::detail
