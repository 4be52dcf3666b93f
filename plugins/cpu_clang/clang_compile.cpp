// The cpu_clang plugin's compiler library (compiler_library.hpp),
// libpolygrad_cpu_clang_compiler.so: C source -> native object in memory, with clang's libraries
// (no fork, no exec, no files). Only this library links libclang-cpp.
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <polygrad/plugin.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>

#include "compiler_library.hpp"

namespace polygrad::cpu_clang {
namespace {

std::string first_lines(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t cut = text.rfind('\n', max_chars);
  return text.substr(0, cut == std::string::npos || cut == 0 ? max_chars : cut) + "\n...";
}

void compile(const std::string& source, const std::vector<std::string>& args,
             const std::string& entry, CompileResult& out) {
  out = CompileResult{};
  std::string diagnostics;
  llvm::raw_string_ostream diag_stream(diagnostics);
  auto compile_error = [&](const std::string& what) {
    diag_stream.flush();
    out.status = PG_ERR_COMPILE;
    out.error = "cpu: compiling kernel '" + entry + "' failed: " + what +
                (diagnostics.empty() ? "" : "\n" + first_lines(diagnostics, 700));
  };
  try {
    // (The plugin's ORC loader initialises the same target in the same libLLVM; both may.)
    static std::once_flag once;
    std::call_once(once, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      llvm::InitializeNativeTargetAsmParser();
    });
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());

    clang::CompilerInstance ci;
    ci.setVerboseOutputStream(std::make_unique<llvm::raw_null_ostream>());  // "N errors generated"
    ci.createDiagnostics(new clang::TextDiagnosticPrinter(diag_stream, &ci.getDiagnosticOpts()),
                         /*ShouldOwnClient=*/true);
    auto invocation = std::make_shared<clang::CompilerInvocation>();
    if (!clang::CompilerInvocation::CreateFromArgs(*invocation, argv, ci.getDiagnostics()))
      return compile_error("bad compiler arguments");
    invocation->getPreprocessorOpts().addRemappedFile(
        "kernel.c", llvm::MemoryBuffer::getMemBufferCopy(source, "kernel.c").release());
    invocation->getPreprocessorOpts().RetainRemappedFileBuffers = false;
    invocation->getFrontendOpts().DisableFree = false;
    ci.setInvocation(std::move(invocation));

    llvm::SmallVector<char, 0> object;
    ci.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(object));
    clang::EmitObjAction action;
    if (!ci.ExecuteAction(action) || ci.getDiagnostics().hasErrorOccurred())
      return compile_error("the C source does not compile");
    if (object.empty()) return compile_error("clang produced no object code");
    out.object.assign(object.begin(), object.end());
  } catch (const std::exception& e) {
    out.status = PG_ERR_INTERNAL;
    out.error = "cpu: compiling kernel '" + entry + "': " + e.what();
  }
}

constexpr CompilerApi kApi = {kCompilerInterface, &compile};

}  // namespace
}  // namespace polygrad::cpu_clang

/// The library's entry (compiler_library.hpp's CompilerEntry).
extern "C" __attribute__((visibility("default"))) const polygrad::cpu_clang::CompilerApi*
polygrad_cpu_clang_compiler(uint32_t interface, char* error, size_t error_size) {
  using namespace polygrad::cpu_clang;
  if (interface != kCompilerInterface) {
    if (error_size > 0)
      std::snprintf(error, error_size,
                    "cpu: %s has compiler interface %u, the plugin %u (a library of another "
                    "build)",
                    kCompilerFile, kCompilerInterface, interface);
    return nullptr;
  }
  return &kApi;
}
