// ABI guard: the size and field offsets of every SDK struct and the value of every enum
// constant, compared with the committed baseline sdk/abi/layout-<major>.txt.
//
// Regenerate the baseline (only together with a version bump):
//   sdk_abi_layout_test --regenerate-baseline=sdk/abi/layout-<major>.txt
#include <polygrad/plugin.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Each struct (S) starts a line followed by its fields (F); each enum type starts a line.
// Kept out of clang-format, which would fold the lists into an unreadable staircase.
// clang-format off
#define PG_ABI_STRUCTS(S, F)                                                                     \
  S(pg_error) F(pg_error, message)                                                               \
  S(pg_arg) F(pg_arg, i) F(pg_arg, f)                                                            \
  S(pg_instruction) F(pg_instruction, op) F(pg_instruction, dtype) F(pg_instruction, vcount)     \
    F(pg_instruction, addrspace) F(pg_instruction, reserved0) F(pg_instruction, reserved1)       \
    F(pg_instruction, src_start) F(pg_instruction, src_count) F(pg_instruction, arg)             \
    F(pg_instruction, arg2)                                                                      \
  S(pg_kernel_program) F(pg_kernel_program, struct_size) F(pg_kernel_program, isa_version)       \
    F(pg_kernel_program, name) F(pg_kernel_program, instructions)                                \
    F(pg_kernel_program, instruction_count) F(pg_kernel_program, operand_count)                  \
    F(pg_kernel_program, operands) F(pg_kernel_program, buffer_count)                            \
    F(pg_kernel_program, scalar_count) F(pg_kernel_program, local_size)                          \
    F(pg_kernel_program, reserved)                                                               \
  S(pg_host_services) F(pg_host_services, struct_size) F(pg_host_services, abi_major)            \
    F(pg_host_services, abi_minor) F(pg_host_services, reserved)                                 \
    F(pg_host_services, host_context) F(pg_host_services, log) F(pg_host_services, get_option)   \
    F(pg_host_services, plugin_path)                                                             \
  S(pg_option_desc) F(pg_option_desc, key) F(pg_option_desc, type)                               \
    F(pg_option_desc, default_value) F(pg_option_desc, help) F(pg_option_desc, min_value)        \
    F(pg_option_desc, max_value)                                                                 \
  S(pg_capabilities) F(pg_capabilities, struct_size) F(pg_capabilities, flags)                   \
    F(pg_capabilities, dtype_mask) F(pg_capabilities, vector_width_bytes)                        \
    F(pg_capabilities, max_vector_lanes) F(pg_capabilities, max_threads_per_group)               \
    F(pg_capabilities, max_local_dims) F(pg_capabilities, max_global_dims)                       \
    F(pg_capabilities, compute_units) F(pg_capabilities, local_memory_bytes)                     \
    F(pg_capabilities, l1_cache_bytes) F(pg_capabilities, l2_cache_bytes)                        \
    F(pg_capabilities, subgroup_size) F(pg_capabilities, index_bits)                             \
    F(pg_capabilities, max_allocation_bytes) F(pg_capabilities, tensor_core_count)               \
    F(pg_capabilities, reserved13) F(pg_capabilities, tensor_cores)                              \
  S(pg_tensor_core) F(pg_tensor_core, m) F(pg_tensor_core, n) F(pg_tensor_core, k)               \
    F(pg_tensor_core, threads) F(pg_tensor_core, dtype_a) F(pg_tensor_core, dtype_b)             \
    F(pg_tensor_core, dtype_c) F(pg_tensor_core, reserved0) F(pg_tensor_core, reserved1)         \
    F(pg_tensor_core, a_map) F(pg_tensor_core, b_map) F(pg_tensor_core, c_map)                   \
  S(pg_device_properties) F(pg_device_properties, struct_size) F(pg_device_properties, reserved) \
    F(pg_device_properties, name) F(pg_device_properties, target)                                \
    F(pg_device_properties, memory_bytes) F(pg_device_properties, caps)                          \
  S(pg_allocator_api) F(pg_allocator_api, struct_size) F(pg_allocator_api, alignment)            \
    F(pg_allocator_api, alloc) F(pg_allocator_api, free) F(pg_allocator_api, copy_in)            \
    F(pg_allocator_api, copy_out) F(pg_allocator_api, copy_device)                               \
    F(pg_allocator_api, host_pointer) F(pg_allocator_api, wrap_host)                             \
    F(pg_allocator_api, device_address)                                                          \
  S(pg_byte_sink) F(pg_byte_sink, context) F(pg_byte_sink, append)                               \
  S(pg_renderer_api) F(pg_renderer_api, struct_size) F(pg_renderer_api, format)                  \
    F(pg_renderer_api, render)                                                                   \
  S(pg_launch_args) F(pg_launch_args, struct_size) F(pg_launch_args, buffer_count)               \
    F(pg_launch_args, buffers) F(pg_launch_args, scalar_count)                                   \
    F(pg_launch_args, shared_memory_bytes) F(pg_launch_args, scalars)                            \
    F(pg_launch_args, global_size) F(pg_launch_args, local_size)                                 \
  S(pg_loader_api) F(pg_loader_api, struct_size) F(pg_loader_api, reserved)                      \
    F(pg_loader_api, load) F(pg_loader_api, unload) F(pg_loader_api, launch)                     \
    F(pg_loader_api, synchronize) F(pg_loader_api, launch_timed) F(pg_loader_api, load_program)  \
    F(pg_loader_api, flags) F(pg_loader_api, reserved15)  \
  S(pg_param_info) F(pg_param_info, kind) F(pg_param_info, slot) F(pg_param_info, dtype)         \
    F(pg_param_info, access)                                                                     \
  S(pg_program_info) F(pg_program_info, struct_size) F(pg_program_info, isa_version)             \
    F(pg_program_info, entry) F(pg_program_info, artifact_format)                                \
    F(pg_program_info, param_count) F(pg_program_info, params)                                   \
    F(pg_program_info, static_local_bytes) F(pg_program_info, dynamic_local_bytes)               \
    F(pg_program_info, required_local_size) F(pg_program_info, reserved)                         \
  S(pg_target) F(pg_target, struct_size) F(pg_target, reserved) F(pg_target, arch)               \
    F(pg_target, caps)                                                                           \
  S(pg_compiler_api) F(pg_compiler_api, struct_size) F(pg_compiler_api, binary_format)           \
    F(pg_compiler_api, describe_target) F(pg_compiler_api, render) F(pg_compiler_api, compile)   \
    F(pg_compiler_api, op_support)                                                               \
  S(pg_async_api) F(pg_async_api, struct_size) F(pg_async_api, reserved)                         \
    F(pg_async_api, stream_create) F(pg_async_api, stream_destroy)                               \
    F(pg_async_api, stream_synchronize) F(pg_async_api, copy_in_async)                           \
    F(pg_async_api, copy_out_async) F(pg_async_api, launch_async) F(pg_async_api, event_create)  \
    F(pg_async_api, event_destroy) F(pg_async_api, event_record)                                 \
    F(pg_async_api, stream_wait_event) F(pg_async_api, event_synchronize)                        \
    F(pg_async_api, host_alloc_pinned) F(pg_async_api, host_free_pinned)                         \
    F(pg_async_api, copy_peer_async) F(pg_async_api, native_stream)                              \
  S(pg_plugin) F(pg_plugin, abi_major) F(pg_plugin, abi_minor) F(pg_plugin, struct_size)         \
    F(pg_plugin, isa_version) F(pg_plugin, name) F(pg_plugin, version)                           \
    F(pg_plugin, device_prefix) F(pg_plugin, options) F(pg_plugin, option_count)                 \
    F(pg_plugin, reserved) F(pg_plugin, init) F(pg_plugin, shutdown) F(pg_plugin, device_count)  \
    F(pg_plugin, device_open) F(pg_plugin, device_properties) F(pg_plugin, allocator)            \
    F(pg_plugin, renderer) F(pg_plugin, loader) F(pg_plugin, compiler) F(pg_plugin, async)

#define PG_ABI_ENUMS(E)                                                                        \
  E(pg_status, PG_OK) E(pg_status, PG_ERR_INVALID_ARGUMENT) E(pg_status, PG_ERR_OUT_OF_MEMORY) \
    E(pg_status, PG_ERR_UNSUPPORTED) E(pg_status, PG_ERR_VERSION) E(pg_status, PG_ERR_COMPILE) \
    E(pg_status, PG_ERR_LAUNCH) E(pg_status, PG_ERR_DEVICE) E(pg_status, PG_ERR_INTERNAL)      \
  E(pg_addrspace, PG_ADDR_NONE) E(pg_addrspace, PG_ADDR_GLOBAL) E(pg_addrspace, PG_ADDR_LOCAL) \
    E(pg_addrspace, PG_ADDR_REG)                                                               \
  E(pg_special_kind, PG_SPECIAL_GROUP) E(pg_special_kind, PG_SPECIAL_LOCAL)                    \
    E(pg_special_kind, PG_SPECIAL_GLOBAL)                                                      \
  E(pg_store_hints, PG_STORE_STREAM)                                                           \
  E(pg_log_level, PG_LOG_DEBUG) E(pg_log_level, PG_LOG_INFO) E(pg_log_level, PG_LOG_WARNING)   \
    E(pg_log_level, PG_LOG_ERROR)                                                              \
  E(pg_option_type, PG_OPTION_BOOL) E(pg_option_type, PG_OPTION_INT)                           \
    E(pg_option_type, PG_OPTION_FLOAT) E(pg_option_type, PG_OPTION_STRING)                     \
  E(pg_capability_flags, PG_CAP_DECOMPOSE_TRANSCENDENTAL)                                      \
    E(pg_capability_flags, PG_CAP_LOCAL_MEMORY) E(pg_capability_flags, PG_CAP_GROUPS)          \
    E(pg_capability_flags, PG_CAP_HOST_MEMORY) E(pg_capability_flags, PG_CAP_ALIGNED_VECTORS)  \
    E(pg_capability_flags, PG_CAP_ATOMIC_ADD) E(pg_capability_flags, PG_CAP_ASYNC)             \
    E(pg_capability_flags, PG_CAP_EXPLICIT_SIMD)                                              \
    E(pg_loader_flags, PG_LOADER_CONCURRENT_LOAD)                                             \
  E(pg_param_kind, PG_PARAM_BUFFER) E(pg_param_kind, PG_PARAM_SCALAR)                          \
  E(pg_param_access, PG_ACCESS_READ) E(pg_param_access, PG_ACCESS_WRITE)                       \
    E(pg_param_access, PG_ACCESS_ATOMIC)                                                       \
  E(macro, PG_MAX_TENSOR_CORES) E(macro, PG_OP_FIRST_ISA2)                                     \
  E(pg_artifact_format, PG_ARTIFACT_C_SOURCE) E(pg_artifact_format, PG_ARTIFACT_CUDA_SOURCE)   \
    E(pg_artifact_format, PG_ARTIFACT_PTX) E(pg_artifact_format, PG_ARTIFACT_WASM)             \
    E(pg_artifact_format, PG_ARTIFACT_OBJECT) E(pg_artifact_format, PG_ARTIFACT_OTHER)         \
  E(macro, PG_ERROR_MESSAGE_MAX)                                                               \
  E(pg_dtype, PG_DTYPE_COUNT)                                                                  \
  E(pg_op, PG_OP_COUNT)
// clang-format on

/// Tables that carry struct_size may grow at a minor bump; every other struct is fixed.
const std::set<std::string> kGrowable = {
    "pg_kernel_program", "pg_host_services", "pg_capabilities", "pg_device_properties",
    "pg_allocator_api",  "pg_renderer_api",  "pg_launch_args",  "pg_loader_api",
    "pg_plugin",         "pg_program_info",  "pg_target",       "pg_compiler_api",
    "pg_async_api"};

std::string abi_version() {
  return std::to_string(PG_PLUGIN_ABI_MAJOR) + "." + std::to_string(PG_PLUGIN_ABI_MINOR);
}

/// The layout of the compiled headers, one fact per line.
std::string current_layout() {
  std::ostringstream out;
  out << "abi " << abi_version() << "\n";
  out << "isa " << PG_KERNEL_ISA_VERSION << "\n";
#define S(type) \
  out << "struct " #type " size " << sizeof(type) << " align " << alignof(type) << "\n";
#define F(type, field)                                                             \
  out << "field " #type "." #field " offset " << offsetof(type, field) << " size " \
      << sizeof(static_cast<type*>(nullptr)->field) << "\n";
  PG_ABI_STRUCTS(S, F)
#undef S
#undef F
#define E(type, name) out << "enum " #type " " #name " " << static_cast<long long>(name) << "\n";
  PG_ABI_ENUMS(E)
#undef E
#define PG_X(name, str, size, kind)                                                            \
  out << "dtype " #name " " << PG_DTYPE_##name << " " str " size " << size << " kind " << kind \
      << "\n";
  PG_DTYPES(PG_X)
#undef PG_X
#define PG_X(name, nsrc, doc) out << "op " #name " " << PG_OP_##name << " sources " << nsrc << "\n";
  PG_KERNEL_OPS(PG_X)
#undef PG_X
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

/// Whether `line` ("field T.f offset O size N") is the last field of a growable table T that
/// is itself a growable table and grew in place: `now` has T.f at offset O with a size of at
/// least N, and no field of T after it (pg_device_properties.caps grows with pg_capabilities).
bool grows_last_field(const std::string& line, const std::vector<std::string>& now) {
  std::istringstream in(line);
  std::string word, name, offset_word, size_word;
  long long offset = 0, size = 0;
  if (!(in >> word >> name >> offset_word >> offset >> size_word >> size) || word != "field")
    return false;
  const std::string type = name.substr(0, name.find('.'));
  if (!kGrowable.count(type)) return false;
  bool grew = false;
  for (const std::string& l : now) {
    std::istringstream n(l);
    std::string w, nm, ow, sw;
    long long o = 0, sz = 0;
    if (!(n >> w >> nm >> ow >> o >> sw >> sz) || w != "field") continue;
    if (nm.substr(0, nm.find('.')) != type) continue;
    if (nm == name)
      grew = o == offset && sz >= size;
    else if (o > offset)
      return false;  // a field after it: it is not the last
  }
  return grew;
}

std::string regenerate_command() {
  return std::string(POLYGRAD_ABI_TEST_BINARY) +
         " --regenerate-baseline=" + POLYGRAD_ABI_BASELINE_DIR + "/layout-" +
         std::to_string(PG_PLUGIN_ABI_MAJOR) + ".txt";
}

/// "" when `current` agrees with `baseline`, else what is wrong and what to do.
std::string compare_layout(const std::string& current, const std::string& baseline) {
  std::vector<std::string> now = lines_of(current), then = lines_of(baseline);
  if (then.empty() || now.empty())
    return "the baseline is empty; regenerate it with " + regenerate_command();
  std::set<std::string> now_set(now.begin(), now.end()), then_set(then.begin(), then.end());
  std::string removed, added;
  for (const std::string& l : then)
    if (!now_set.count(l)) removed += "\n  - " + l;
  for (const std::string& l : now)
    if (!then_set.count(l)) added += "\n  + " + l;
  if (now[0] == then[0]) {  // same ABI version: nothing may change
    if (removed.empty() && added.empty()) return "";
    return "layout changed without an ABI version bump: bump PG_PLUGIN_ABI_MAJOR (breaking) or "
           "append fields and bump MINOR, then regenerate the baseline with " +
           regenerate_command() + removed + added;
  }
  // The header's version moved on: the old facts must still hold unless the major changed.
  std::string breaking;
  bool same_major = now[0].substr(0, now[0].find('.')) == then[0].substr(0, then[0].find('.'));
  for (const std::string& l : then) {
    if (now_set.count(l) || l.rfind("abi ", 0) == 0 || l.rfind("enum pg_op PG_OP_COUNT", 0) == 0 ||
        l.rfind("enum pg_dtype PG_DTYPE_COUNT", 0) == 0 || l.rfind("isa ", 0) == 0)
      continue;
    std::string type = l.rfind("struct ", 0) == 0 ? l.substr(7, l.find(' ', 7) - 7) : "";
    if (kGrowable.count(type) || grows_last_field(l, now)) continue;
    breaking += "\n  - " + l;
  }
  std::string msg = "the header declares ABI " + now[0].substr(4) + " but the baseline records " +
                    then[0].substr(4) + ": a new baseline is needed for this version";
  if (same_major && !breaking.empty())
    msg += "; and the change is not append-only (a major bump is required):" + breaking;
  return msg + "; regenerate it with " + regenerate_command();
}

std::string read_file(const std::string& path, bool& found) {
  std::ifstream in(path);
  found = static_cast<bool>(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string baseline_path() {
  return std::string(POLYGRAD_ABI_BASELINE_DIR) + "/layout-" + std::to_string(PG_PLUGIN_ABI_MAJOR) +
         ".txt";
}

TEST(AbiLayout, MatchesCommittedBaseline) {
  bool found = false;
  std::string baseline = read_file(baseline_path(), found);
  ASSERT_TRUE(found) << "no baseline " << baseline_path() << " for ABI major "
                     << PG_PLUGIN_ABI_MAJOR << ": create it with " << regenerate_command();
  std::string problems = compare_layout(current_layout(), baseline);
  EXPECT_EQ(problems, "");
}

TEST(AbiLayout, InstructionIsThirtyTwoBytes) {
  // plugin.h documents pg_instruction as 32 bytes: 2+1+1+1+1+2 + 4+4 + 8 + 8.
  EXPECT_EQ(sizeof(pg_instruction), 32u);
  EXPECT_EQ(offsetof(pg_instruction, arg), 16u);
}

TEST(AbiLayout, DetectsAMovedFieldAtTheSameVersion) {
  std::string now = current_layout();
  std::string needle = "field pg_plugin.init offset ";
  size_t at = now.find(needle);
  ASSERT_NE(at, std::string::npos);
  std::ostringstream text;  // e.g. offset 64 -> 164
  text << now.substr(0, at + needle.size()) << "1" << now.substr(at + needle.size());
  std::string moved = text.str();
  std::string problems = compare_layout(moved, now);
  EXPECT_NE(problems.find("layout changed without an ABI version bump"), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("pg_plugin.init"), std::string::npos) << problems;
}

TEST(AbiLayout, DemandsANewBaselineWhenTheVersionMoves) {
  std::string now = current_layout();
  std::ostringstream text;  // the same facts under a newer minor, plus one appended field
  text << "abi 1.99\n" << now.substr(now.find('\n') + 1) << "field pg_plugin.new_slot offset 999\n";
  std::string bumped = text.str();
  std::string problems = compare_layout(bumped, now);
  EXPECT_NE(problems.find("a new baseline is needed"), std::string::npos) << problems;
  EXPECT_EQ(problems.find("not append-only"), std::string::npos) << problems;
  // Moving an existing field at a minor bump is breaking.
  std::string broken = bumped;
  broken.replace(broken.find("field pg_error.message offset 0"), 31,
                 "field pg_error.message offset 8");
  EXPECT_NE(compare_layout(broken, now).find("not append-only"), std::string::npos);
}

}  // namespace

int main(int argc, char** argv) {
  const char* flag = "--regenerate-baseline=";
  for (int k = 1; k < argc; ++k) {
    if (std::strncmp(argv[k], flag, std::strlen(flag)) == 0) {
      std::string path = argv[k] + std::strlen(flag);
      std::ofstream out(path);
      out << "# polygrad plugin ABI layout baseline. Generated by sdk_abi_layout_test\n"
             "# --regenerate-baseline; regenerate only together with an ABI version bump.\n"
          << current_layout();
      if (!out) {
        std::cerr << "cannot write " << path << "\n";
        return 1;
      }
      std::cout << "wrote " << path << "\n";
      return 0;
    }
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
