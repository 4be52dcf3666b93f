// C source -> native object in memory, with clang's libraries (no fork, no exec, no files).
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

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

std::string first_lines(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t cut = text.rfind('\n', max_chars);
  return text.substr(0, cut == std::string::npos || cut == 0 ? max_chars : cut) + "\n...";
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
  ensure_llvm_initialized();
  std::vector<std::string> args = cc1_args(options, wants_slp(source));
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());

  std::string diagnostics;
  llvm::raw_string_ostream diag_stream(diagnostics);
  auto compile_error = [&](const std::string& what) {
    diag_stream.flush();
    sdk::fail(PG_ERR_COMPILE,
              "cpu: compiling kernel '" + entry + "' failed: " + what +
                  (diagnostics.empty() ? "" : "\n" + first_lines(diagnostics, 700)));
  };

  clang::CompilerInstance ci;
  ci.setVerboseOutputStream(std::make_unique<llvm::raw_null_ostream>());  // "N errors generated"
  ci.createDiagnostics(new clang::TextDiagnosticPrinter(diag_stream, &ci.getDiagnosticOpts()),
                       /*ShouldOwnClient=*/true);
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, argv, ci.getDiagnostics()))
    compile_error("bad compiler arguments");
  invocation->getPreprocessorOpts().addRemappedFile(
      "kernel.c", llvm::MemoryBuffer::getMemBufferCopy(source, "kernel.c").release());
  invocation->getPreprocessorOpts().RetainRemappedFileBuffers = false;
  invocation->getFrontendOpts().DisableFree = false;
  ci.setInvocation(std::move(invocation));

  llvm::SmallVector<char, 0> object;
  ci.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(object));
  clang::EmitObjAction action;
  if (!ci.ExecuteAction(action) || ci.getDiagnostics().hasErrorOccurred())
    compile_error("the C source does not compile");
  if (object.empty()) compile_error("clang produced no object code");
  return std::vector<char>(object.begin(), object.end());
}

}  // namespace polygrad::cpu_clang
