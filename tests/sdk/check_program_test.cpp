// polygrad::sdk::check_program: the validation every plugin built with plugin.hpp runs before
// rendering. Each malformed program is built by hand; the expected message is the contract.
#include <gtest/gtest.h>
#include <polygrad/plugin.hpp>
#include <polygrad/program_builder.hpp>

#include <string>

namespace {

using polygrad::sdk::Error;
using polygrad::sdk::ProgramBuilder;

/// The message check_program throws for `b`'s program, or "" when it accepts it.
std::string rejection(ProgramBuilder& b, pg_status* status = nullptr) {
  try {
    polygrad::sdk::check_program(b.program());
  } catch (const Error& e) {
    if (status) *status = e.status();
    return e.what();
  }
  return "";
}

TEST(CheckProgram, AcceptsAWellFormedProgramWithAnIfBlock) {
  ProgramBuilder b("ok");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto block = b.if_(b.binary(PG_OP_CMPLT, i, b.const_i(PG_DTYPE_INT32, 4)));
  b.store(b.index(out, i), i);
  b.end_if(block);  // an IF is END_IF's source: the one use of a void instruction allowed
  EXPECT_EQ(rejection(b), "");
}

TEST(CheckProgram, RejectsAStoreUsedAsAValue) {
  ProgramBuilder b("void_source");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.store(b.index(out, i), i);
  auto store = static_cast<ProgramBuilder::Ref>(b.instructions().size() - 1);
  b.emit(PG_OP_NEG, PG_DTYPE_INT32, {store});
  pg_status status = PG_OK;
  EXPECT_EQ(rejection(b, &status),
            "kernel program 'void_source': instruction 4: source 0 (STORE) has no value");
  EXPECT_EQ(status, PG_ERR_INVALID_ARGUMENT);
}

TEST(CheckProgram, RejectsAnIfUsedOutsideEndIf) {
  ProgramBuilder b("if_source");
  auto cond = b.binary(PG_OP_CMPLT, b.const_i(PG_DTYPE_INT32, 1), b.const_i(PG_DTYPE_INT32, 2));
  auto block = b.if_(cond);
  b.emit(PG_OP_NOT, PG_DTYPE_BOOL, {block});
  EXPECT_EQ(rejection(b), "kernel program 'if_source': instruction 4: source 0 (IF) has no value");
}

TEST(CheckProgram, RejectsASourceThatIsNotEarlier) {
  ProgramBuilder b("forward");
  auto a = b.const_i(PG_DTYPE_INT32, 1);
  b.unary(PG_OP_NEG, a);
  b.operands()[b.instructions()[1].src_start] = 1;  // NEG uses itself
  EXPECT_EQ(rejection(b),
            "kernel program 'forward': instruction 1: source 0 is not an earlier instruction");
}

// vcount is the lane count of a result; a STORE writes its value's lanes, so a STORE of a
// 4-lane value with vcount 1 (the reading under which a renderer wrote one lane) is refused.
TEST(CheckProgram, RejectsAStoreWhoseVcountIsNotItsValues) {
  ProgramBuilder b("store_lanes");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto at0 = b.index(out, b.const_i(PG_DTYPE_INT32, 0));
  auto v = b.load(at0, 4);
  auto at4 = b.index(out, b.const_i(PG_DTYPE_INT32, 4));
  b.store(at4, v);
  EXPECT_EQ(rejection(b), "");
  b.instructions().back().vcount = 1;
  EXPECT_EQ(rejection(b),
            "kernel program 'store_lanes': instruction 6: STORE has vcount 1 but its value has 4 "
            "lanes");
}

TEST(CheckProgram, RejectsAGatedLoadWhoseAltHasOtherLanes) {
  ProgramBuilder b("alt_lanes");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto gate = b.binary(PG_OP_CMPLT, i, b.const_i(PG_DTYPE_INT32, 4));
  auto at = b.index(out, i);
  auto alt = b.const_i(PG_DTYPE_INT32, 0, 4);
  auto v = b.load_gated(at, alt, gate);
  b.store(at, v);
  EXPECT_EQ(rejection(b), "");
  b.instructions()[v].vcount = 2;
  b.instructions().back().vcount = 2;
  EXPECT_EQ(rejection(b),
            "kernel program 'alt_lanes': instruction 6: a gated LOAD's alt must have the LOAD's "
            "dtype and vcount");
}

TEST(CheckProgram, RejectsAGateThatIsNotOneBool) {
  ProgramBuilder b("vector_gate");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto gate = b.const_i(PG_DTYPE_BOOL, 1, 4);
  auto at = b.index(out, i);
  b.store_gated(at, b.const_i(PG_DTYPE_INT32, 7, 4), gate);
  EXPECT_EQ(rejection(b),
            "kernel program 'vector_gate': instruction 5: the gate of a STORE must be one bool "
            "(vcount 1)");
}

}  // namespace

namespace {

/// The message check_program throws for `b`'s program against a plugin at `plugin_isa`.
std::string rejection_at(ProgramBuilder& b, uint32_t plugin_isa, pg_status* status) {
  try {
    polygrad::sdk::check_program(b.program(), plugin_isa);
  } catch (const Error& e) {
    *status = e.status();
    return e.what();
  }
  return "";
}

ProgramBuilder atomic_program(uint32_t isa) {
  ProgramBuilder b("atomic");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.emit(PG_OP_ATOMIC_ADD, PG_DTYPE_INT32, {b.index(out, i), i});
  b.set_isa_version(isa);
  return b;
}

TEST(CheckProgram, AcceptsProgramsAtOrBelowThePluginsIsa) {
  pg_status status = PG_OK;
  ProgramBuilder v1("copy");
  auto out = v1.param_buffer(0, PG_DTYPE_INT32);
  auto i = v1.special(PG_SPECIAL_GLOBAL, 0);
  v1.store(v1.index(out, i), i);
  v1.set_isa_version(1);
  EXPECT_EQ(rejection_at(v1, 1, &status), "");
  EXPECT_EQ(rejection_at(v1, 2, &status), "");  // an ISA 1 program on an ISA 2 plugin
  ProgramBuilder v2 = atomic_program(2);
  EXPECT_EQ(rejection_at(v2, 2, &status), "");
  EXPECT_EQ(rejection_at(v2, 1, &status),
            "kernel program ISA version 2 but this plugin renders versions 1 to 1");
  EXPECT_EQ(status, PG_ERR_VERSION);
  v1.set_isa_version(0);
  EXPECT_EQ(rejection_at(v1, 2, &status),
            "kernel program ISA version 0 but this plugin renders versions 1 to 2");
}

TEST(CheckProgram, RejectsAnOpNewerThanTheProgramsIsa) {
  pg_status status = PG_OK;
  ProgramBuilder b = atomic_program(1);
  EXPECT_EQ(rejection_at(b, 2, &status),
            "kernel program 'atomic': instruction 3: ATOMIC_ADD is an ISA 2 op in an ISA 1 "
            "program");
  EXPECT_EQ(status, PG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(polygrad::sdk::op_isa(PG_OP_GEP), 1u);
  EXPECT_EQ(polygrad::sdk::op_isa(PG_OP_WMMA), 2u);
  EXPECT_EQ(polygrad::sdk::op_isa(PG_OP_COUNT), 0u);
}

}  // namespace
