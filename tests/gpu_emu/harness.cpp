#include "harness.hpp"

#include <gtest/gtest.h>

namespace polygrad::test {

Outcome Emulator::render(sdk::ProgramBuilder& builder, std::string& artifact) {
  Outcome o;
  o.status = PluginDriver::render(builder, artifact, o.error);
  return o;
}

Outcome Emulator::run(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers,
                      Dims global, Dims local, const std::vector<int64_t>& scalars) {
  Outcome o;
  pg_program_t program = nullptr;
  o.status = load(builder, program, o.error);
  if (!o.ok()) return o;
  o.status = launch(program, buffers, scalars, global, local, o.error);
  unload(program);
  return o;
}

void Emulator::run_ok(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers,
                      Dims global, Dims local, const std::vector<int64_t>& scalars) {
  const Outcome o = run(builder, buffers, global, local, scalars);
  ASSERT_TRUE(o.ok()) << o.error;
}

}  // namespace polygrad::test
