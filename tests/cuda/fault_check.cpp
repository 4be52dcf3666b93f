// A kernel fault on a GPU, one per process (a fault leaves the CUDA context unusable): the
// kernel stores far outside its buffer. Mode "async": the launch returns and the next
// synchronize reports the fault with the kernel's name. Mode "debug_sync": with the plugin's
// debug_sync option the launch itself reports it, naming the kernel. Exit 0 when the report
// is as expected, 1 when not, 77 (skipped) where there is no CUDA device.
//   cuda_fault_check async|debug_sync      (POLYGRAD_CUDA_PLUGIN: the plugin to load)
#include <polygrad/program_builder.hpp>
#include <polygrad/registry.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

int check(const std::string& mode) {
  polygrad::RegistryOptions options;
  const char* plugin = std::getenv("POLYGRAD_CUDA_PLUGIN");  // a bundle's (gpu-check.sh)
  options.plugin_paths = {plugin != nullptr && plugin[0] != '\0' ? plugin : PG_TEST_CUDA_PLUGIN};
  options.use_env = false;
  options.use_libdir = false;
  options.use_build_tree = false;
  options.search_config = false;
  if (mode == "debug_sync") {
    const std::string config =
        "/tmp/polygrad-cuda-fault-check-" + std::to_string(::getpid()) + ".yaml";
    std::ofstream(config) << "devices:\n  cuda:\n    debug_sync: true\n";
    options.config_path = config;
  }
  polygrad::Registry registry(options);
  bool present = false;
  for (const std::string& name : registry.device_names()) present |= name.rfind("cuda", 0) == 0;
  if (!present) {
    if (!options.config_path.empty()) std::remove(options.config_path.c_str());
    std::printf("skip: no CUDA device\n");
    return 77;
  }
  polygrad::Device device = registry.device("cuda");
  // out[i + 2^36] = 1: 256 GiB past a 4-byte buffer.
  polygrad::sdk::ProgramBuilder b("pg_fault_store");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto far = b.binary(PG_OP_ADD, b.cast(PG_OP_CAST, PG_DTYPE_INT64, i),
                      b.const_i(PG_DTYPE_INT64, int64_t{1} << 36));
  b.store(b.index(out, far), b.const_f(PG_DTYPE_FLOAT32, 1.0));
  b.set_local_size(32, 1, 1);
  polygrad::Buffer buffer = device.alloc(4);
  polygrad::Program program = device.load(device.render(b.program()), b.program());
  if (!options.config_path.empty()) std::remove(options.config_path.c_str());  // read by now
  polygrad::LaunchArgs args;
  args.buffers = {&buffer};
  args.global_size = {1, 1, 1};
  args.local_size = {32, 1, 1};
  std::string error;
  try {
    device.launch(program, args);
    if (mode == "debug_sync") error = "(the launch returned)";
    device.synchronize();
  } catch (const std::exception& e) {
    error += e.what();
  }
  std::printf("%s: %s\n", mode.c_str(), error.c_str());
  const bool named = error.find("pg_fault_store") != std::string::npos &&
                     error.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos;
  const bool where = mode == "debug_sync" ? error.find("(the launch returned)") == std::string::npos
                                          : error.find("synchronize") != std::string::npos;
  return named && where ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "async";
  if (mode != "async" && mode != "debug_sync") {
    std::fprintf(stderr, "usage: cuda_fault_check async|debug_sync\n");
    return 2;
  }
  try {
    return check(mode);
  } catch (const std::exception& e) {
    std::printf("%s: unexpected error: %s\n", mode.c_str(), e.what());
    return 1;
  }
}
