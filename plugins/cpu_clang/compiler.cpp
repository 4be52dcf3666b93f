// The compiler's flags and identity (part of every cache key), and C source -> native object
// through the compiler library (compiler_library.hpp: clang's libraries, loaded at the first
// compile, so a process whose kernels all come from the object cache never opens clang).
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/TargetSelect.h>

#include <mutex>
#include <utility>

#include "compiler_library.hpp"
#include "cpu_clang.hpp"

namespace polygrad::cpu_clang {

namespace {

/// cc1 flags besides target and optimisation level. Changing them changes every cache key.
/// -fwrapv: signed overflow wraps, as every other backend does it. -fno-unroll-loops: the
/// host's optimiser chooses unrolling (upcast/unroll); LLVM's unroller would mostly add compile
/// time (about a quarter of a small kernel's). PIC keeps the object loadable anywhere.
const std::vector<std::string>& fixed_flags() {
  static const std::vector<std::string> flags = {"-emit-obj",
                                                 "-x",
                                                 "c",
                                                 "-std=gnu11",
                                                 "-fwrapv",
                                                 "-fno-unroll-loops",
                                                 "-w",
                                                 "-mrelocation-model",
                                                 "pic",
                                                 "-pic-level",
                                                 "2",
                                                 "-discard-value-names",
                                                 "-ffp-contract=on"};
  return flags;
}

/// LLVM prefers 256-bit vectors on AVX-512 hosts (Sapphire Rapids among them) where the host's
/// codegen plans 16-lane loops: then the loop vectoriser is told to use 512 bits. On a Sapphire
/// Rapids host, 2 threads: softmax 4096^2 9.1-9.3 -> 7.9-8.7 ms; a (512, 2048) cross-entropy's
/// gradient kernel 490 -> 382 us.
std::vector<std::string> width_flags(const HostCpu& cpu) {
  if (cpu.vector_width_bytes >= 64) return {"-mprefer-vector-width=512"};
  return {};
}

std::vector<std::string> cc1_args(const CompileOptions& options, bool slp) {
  std::vector<std::string> args = {"-triple", options.cpu->triple, "-target-cpu", options.cpu->cpu};
  for (const std::string& f : options.cpu->features) {
    args.push_back("-target-feature");
    args.push_back(f);
  }
  for (const std::string& f : width_flags(*options.cpu)) args.push_back(f);
  args.push_back("-O" + std::to_string(options.opt_level));
  if (options.opt_level >= 2) {
    args.push_back("-vectorize-loops");
    if (slp) args.push_back("-vectorize-slp");
  }
  for (const std::string& f : fixed_flags()) args.push_back(f);
  args.push_back("kernel.c");
  return args;
}

}  // namespace

void ensure_llvm_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string compiler_identity(const HostCpu& cpu) {
  std::string id = "clang-libs " LLVM_VERSION_STRING;
  for (const std::string& f : fixed_flags()) id += " " + f;
  for (const std::string& f : width_flags(cpu)) id += " " + f;
  return id;
}

std::vector<char> compile_c(const std::string& source, const std::string& entry,
                            const CompileOptions& options) {
  CompileResult r;
  compiler_library().compile(source, cc1_args(options, wants_slp(source)), entry, r);
  if (r.status != PG_OK) sdk::fail(static_cast<pg_status>(r.status), r.error);
  return std::move(r.object);
}

}  // namespace polygrad::cpu_clang
