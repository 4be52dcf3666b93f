// Error paths: garbage artifacts, malformed programs, bad launches. Each must come back as an
// error status with a message, never as PG_OK, a crash or an exception.
#include <polygrad/plugin.hpp>
#include <polygrad/program_builder.hpp>

#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

/// out[i] = in[i] for the first declared of int32, float32 or any dtype.
sdk::ProgramBuilder copy_program(const Session& s) {
  uint64_t mask = s.properties().caps.dtype_mask;
  pg_dtype dt = PG_DTYPE_INT32;
  if (!(mask & (uint64_t{1} << PG_DTYPE_INT32))) {
    dt = PG_DTYPE_FLOAT32;
    for (uint32_t d = 1; !(mask & (uint64_t{1} << dt)) && d < PG_DTYPE_COUNT; ++d)
      dt = static_cast<pg_dtype>(d);
  }
  sdk::ProgramBuilder b("pgc_error_copy");
  auto out = b.param_buffer(0, dt);
  auto in = b.param_buffer(1, dt);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.store(b.index(out, i), b.load(b.index(in, i)));
  return b;
}

void check_render(const Session& s, Suite& suite) {
  std::string artifact;
  expect_error(suite, "render.null_program", s.render(nullptr, artifact));

  sdk::ProgramBuilder b = copy_program(s);
  b.operands()[b.instructions()[3].src_start] = 4;  // INDEX uses itself
  expect_error(suite, "render.source_not_earlier", s.render(&b.program(), artifact));

  b = copy_program(s);
  b.emit(PG_OP_NOT, b.dtype_of(1), {static_cast<uint32_t>(b.instructions().size() - 1)});
  expect_error(suite, "render.store_used_as_value", s.render(&b.program(), artifact),
               PG_ERR_INVALID_ARGUMENT);

  b = copy_program(s);
  b.instructions()[2].op = PG_OP_COUNT + 7;
  expect_error(suite, "render.unknown_op", s.render(&b.program(), artifact));

  b = copy_program(s);
  b.instructions()[0].arg.i = 9;  // buffer slot past buffer_count
  expect_error(suite, "render.buffer_slot_out_of_range", s.render(&b.program(), artifact));

  b = copy_program(s);
  pg_kernel_program p = b.program();
  p.isa_version = PG_KERNEL_ISA_VERSION + 1;
  expect_error(suite, "render.newer_isa_version", s.render(&p, artifact));
}

void check_load(const Session& s, Suite& suite) {
  static const char garbage[] = "\x7f\x00\xffthis is not an artifact of any plugin\x01\x02";
  pg_program_t program = nullptr;
  CallResult r = s.load(std::string(garbage, sizeof garbage), "pgc_error_copy", &program);
  expect_error(suite, "load.garbage", r, PG_ERR_COMPILE);
  if (r.ok()) s.unload(program);
  r = s.load(std::string(), "pgc_error_copy", &program);
  expect_error(suite, "load.empty", r);
  if (r.ok()) s.unload(program);
}

void check_launch(const Session& s, Suite& suite) {
  sdk::ProgramBuilder b = copy_program(s);
  std::string artifact;
  pg_program_t program = nullptr;
  CallResult r = s.render(&b.program(), artifact);
  if (r.ok()) r = s.load(artifact, "pgc_error_copy", &program, &b.program());
  if (!suite.expect(r.ok(), "launch.setup", "render/load of a copy kernel: " + r.describe()))
    return;
  expect_error(suite, "launch.null_args", s.launch(program, nullptr));

  pg_buffer_t buffer = nullptr;
  r = s.alloc(64, &buffer);
  if (suite.expect(r.ok(), "launch.alloc", r.describe())) {
    pg_launch_args args{};
    args.struct_size = sizeof args;
    args.buffer_count = 1;  // the program has two buffer parameters
    args.buffers = &buffer;
    for (int d = 0; d < 3; ++d) args.global_size[d] = args.local_size[d] = 1;
    expect_error(suite, "launch.too_few_buffers", s.launch(program, &args));
    args.buffer_count = 2;
    args.buffers = nullptr;
    expect_error(suite, "launch.null_buffer_array", s.launch(program, &args));
    s.free(buffer);
  }
  s.unload(program);
  s.unload(nullptr);  // must be ignored
  suite.pass("unload.null");
}

}  // namespace

void run_error_suite(const Session& s, Suite& suite) {
  check_render(s, suite);
  check_load(s, suite);
  check_launch(s, suite);
}

}  // namespace polygrad::conformance::detail
