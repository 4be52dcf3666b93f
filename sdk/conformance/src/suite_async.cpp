// The async suite (ABI 1.3, plugins with pg_plugin.async): two streams, an event between them,
// async copies through pinned memory, and a launch in between; the values must come back.
#include <polygrad/program_builder.hpp>
#include <polygrad/program_info.hpp>

#include <cstring>
#include <vector>

#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

constexpr uint32_t kCount = 256;

/// out[i] = in[i] * 2 + 1 in int32 (every plugin declares int32).
sdk::ProgramBuilder twice_plus_one() {
  sdk::ProgramBuilder b("pgc_async_twice");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto in = b.param_buffer(1, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto v = b.load(b.index(in, i));
  b.store(b.index(out, i),
          b.binary(PG_OP_ADD, b.binary(PG_OP_ADD, v, v), b.const_i(PG_DTYPE_INT32, 1)));
  return b;
}

}  // namespace

void run_async_suite(const Session& s, Suite& suite) {
  const pg_async_api* a = s.plugin().async;
  const pg_device_t d = s.device();
  pg_stream_t first = nullptr, second = nullptr;
  pg_event_t event = nullptr, never = nullptr;
  if (!expect_ok(suite, "stream_create",
                 guarded([&](pg_error* e) { return a->stream_create(d, &first, e); })) ||
      !expect_ok(suite, "stream_create.second",
                 guarded([&](pg_error* e) { return a->stream_create(d, &second, e); })))
    return;
  expect_ok(suite, "event_create",
            guarded([&](pg_error* e) { return a->event_create(d, &event, e); }));
  expect_ok(suite, "event_create.second",
            guarded([&](pg_error* e) { return a->event_create(d, &never, e); }));
  expect_ok(suite, "event_synchronize.never_recorded",
            guarded([&](pg_error* e) { return a->event_synchronize(d, never, e); }));

  // Host memory: the plugin's pinned memory where it has some.
  const uint64_t bytes = kCount * sizeof(int32_t);
  void* pinned_in = nullptr;
  void* pinned_out = nullptr;
  const bool has_pinned = a->host_alloc_pinned != nullptr && a->host_free_pinned != nullptr;
  std::vector<int32_t> plain_in(kCount), plain_out(kCount, -7);
  if (has_pinned) {
    expect_ok(suite, "host_alloc_pinned",
              guarded([&](pg_error* e) { return a->host_alloc_pinned(d, bytes, &pinned_in, e); }));
    expect_ok(suite, "host_alloc_pinned.second",
              guarded([&](pg_error* e) { return a->host_alloc_pinned(d, bytes, &pinned_out, e); }));
  }
  auto* in = static_cast<int32_t*>(pinned_in ? pinned_in : plain_in.data());
  auto* out = static_cast<int32_t*>(pinned_out ? pinned_out : plain_out.data());
  for (uint32_t i = 0; i < kCount; ++i) {
    in[i] = static_cast<int32_t>(i * 3) - 100;
    out[i] = -7;
  }

  pg_buffer_t src = nullptr, dst = nullptr;
  sdk::ProgramBuilder program = twice_plus_one();
  std::string artifact;
  pg_program_t loaded = nullptr;
  bool ready = s.alloc(bytes, &src).ok() && s.alloc(bytes, &dst).ok();
  CallResult r = s.render(&program.program(), artifact);
  if (r.ok()) r = s.load(artifact, program.program().name, &loaded, &program.program());
  ready = suite.expect(ready && r.ok(), "setup", "alloc, render and load: " + r.describe());

  if (ready) {
    // first: copy in, launch, mark; second: wait for the mark, copy out.
    pg_launch_args args{};
    args.struct_size = sizeof(args);
    pg_buffer_t buffers[2] = {dst, src};
    args.buffer_count = 2;
    args.buffers = buffers;
    args.global_size[0] = kCount;
    args.global_size[1] = args.global_size[2] = 1;
    args.local_size[0] = args.local_size[1] = args.local_size[2] = 1;
    bool ok = expect_ok(suite, "copy_in_async", guarded([&](pg_error* e) {
                          return a->copy_in_async(d, first, src, 0, in, bytes, e);
                        }));
    ok = expect_ok(suite, "launch_async", guarded([&](pg_error* e) {
                     return a->launch_async(d, first, loaded, &args, e);
                   })) &&
         ok;
    ok = expect_ok(suite, "event_record",
                   guarded([&](pg_error* e) { return a->event_record(d, event, first, e); })) &&
         ok;
    ok = expect_ok(suite, "stream_wait_event", guarded([&](pg_error* e) {
                     return a->stream_wait_event(d, second, event, e);
                   })) &&
         ok;
    ok = expect_ok(suite, "copy_out_async", guarded([&](pg_error* e) {
                     return a->copy_out_async(d, second, out, dst, 0, bytes, e);
                   })) &&
         ok;
    ok = expect_ok(suite, "stream_synchronize",
                   guarded([&](pg_error* e) { return a->stream_synchronize(d, second, e); })) &&
         ok;
    expect_ok(suite, "event_synchronize",
              guarded([&](pg_error* e) { return a->event_synchronize(d, event, e); }));
    if (ok) {
      uint32_t wrong = 0;
      for (uint32_t i = 0; i < kCount; ++i)
        if (out[i] != 2 * in[i] + 1) ++wrong;
      suite.expect(wrong == 0, "values",
                   std::to_string(wrong) + " of " + std::to_string(kCount) +
                       " elements differ from 2 * in + 1 after copy in, launch, event, copy out");
    }
    expect_ok(suite, "loader.synchronize",
              guarded([&](pg_error* e) { return s.loader()->synchronize(d, e); }));
  }
  if (loaded) s.unload(loaded);
  s.free(src);
  s.free(dst);
  a->stream_destroy(d, first);
  a->stream_destroy(d, second);
  a->event_destroy(d, event);
  a->event_destroy(d, never);
  if (has_pinned) {
    a->host_free_pinned(d, pinned_in);
    a->host_free_pinned(d, pinned_out);
  }
}

}  // namespace polygrad::conformance::detail
