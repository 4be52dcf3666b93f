// Native objects -> callable kernels with LLVM ORC's LLJIT. One JIT per device, created in the
// background when the device opens (or by the first load, whichever comes first); every program
// lives in its own JITDylib so that programs with the same entry name coexist and unload removes
// exactly one.
#include <pthread.h>

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <system_error>
#include <thread>

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include "cpu_clang.hpp"

namespace polygrad::cpu_clang {

struct Jit::State {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  llvm::orc::JITDylib* runtime = nullptr;  ///< libm and libc symbols kernels may call
  std::mutex mutex;
  uint64_t next_id = 0;
};

namespace {

[[noreturn]] void jit_fail(const std::string& what, llvm::Error error) {
  sdk::fail(PG_ERR_COMPILE, "cpu: " + what + ": " + llvm::toString(std::move(error)));
}

/// Functions the code generator may call, bound to this library's own copies so that they
/// resolve even when the host loaded us RTLD_LOCAL.
llvm::orc::SymbolMap runtime_symbols(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap map;
  auto add = [&](const char* name, auto* fn) {
    map[jit.mangleAndIntern(name)] =
        llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(reinterpret_cast<void*>(fn)),
                                 llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  };
  add("exp2f", static_cast<float (*)(float)>(&::exp2f));
  add("exp2", static_cast<double (*)(double)>(&::exp2));
  add("log2f", static_cast<float (*)(float)>(&::log2f));
  add("log2", static_cast<double (*)(double)>(&::log2));
  add("sinf", static_cast<float (*)(float)>(&::sinf));
  add("sin", static_cast<double (*)(double)>(&::sin));
  add("sqrtf", static_cast<float (*)(float)>(&::sqrtf));
  add("sqrt", static_cast<double (*)(double)>(&::sqrt));
  add("truncf", static_cast<float (*)(float)>(&::truncf));
  add("trunc", static_cast<double (*)(double)>(&::trunc));
  add("memcpy", &::memcpy);
  add("memmove", &::memmove);
  add("memset", &::memset);
  return map;
}

}  // namespace

Jit::Jit() : state_(std::make_unique<State>()) {}

Jit::~Jit() {
  wait_for_creations();  // a creation in the background uses this JIT
}

void Jit::create() {
  std::call_once(created_, [this] {
    ensure_llvm_initialized();
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit) jit_fail("cannot create the JIT", jit.takeError());
    state_->jit = std::move(*jit);
    auto& es = state_->jit->getExecutionSession();
    auto runtime = es.createJITDylib("pg_runtime");
    if (!runtime) jit_fail("cannot create the runtime library", runtime.takeError());
    state_->runtime = &*runtime;
    if (auto err =
            state_->runtime->define(llvm::orc::absoluteSymbols(runtime_symbols(*state_->jit))))
      jit_fail("cannot define runtime symbols", std::move(err));
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        state_->jit->getDataLayout().getGlobalPrefix());
    if (!process) jit_fail("cannot search the process", process.takeError());
    state_->runtime->addGenerator(std::move(*process));
  });  // a throw leaves created_ unset: the next load tries again
}

namespace {

/// JITs being created in the background, waited for when a JIT is destroyed (its creation
/// uses it), at exit (the host never closes its devices, and a creation still running while
/// LLVM's static objects are destroyed would use them) and before a fork (a child would
/// inherit a creation half done by a thread it does not have).
class Creations {
 public:
  void begin() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++running_;
  }
  void end() {
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
    done_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  int running_ = 0;
};

/// Never destroyed (a fork or a late exit handler may still ask); a static waiter, constructed
/// after LLVM's static objects and so destroyed before them, waits at exit.
Creations& creations() {
  static Creations* c = [] {
    auto* made = new Creations;
    pthread_atfork([] { creations().wait(); }, nullptr, nullptr);
    return made;
  }();
  static struct ExitWaiter {
    ~ExitWaiter() { creations().wait(); }
  } waiter;
  return *c;
}

}  // namespace

void Jit::wait_for_creations() {
  creations().wait();
}

void Jit::create_in_background() {
  Creations& running = creations();
  running.begin();
  // (A failure here is left for the first load, which tries again and reports it; so is a
  // thread that cannot start.)
  try {
    std::thread([this, &running] {
      try {
        create();
      } catch (...) {
      }
      running.end();
    }).detach();
  } catch (const std::system_error&) {
    running.end();
  }
}

KernelFn Jit::load(const std::vector<char>& object, const std::string& entry, void** handle) {
  create();

  std::lock_guard<std::mutex> lock(state_->mutex);
  auto& es = state_->jit->getExecutionSession();
  auto dylib = es.createJITDylib("pg_program_" + std::to_string(state_->next_id++));
  if (!dylib) jit_fail("cannot create a library for '" + entry + "'", dylib.takeError());
  llvm::orc::JITDylib& jd = *dylib;
  jd.addToLinkOrder(*state_->runtime);
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()),
                                                     entry + ".o");
  if (auto err = state_->jit->addObjectFile(jd, std::move(buffer))) {
    llvm::consumeError(es.removeJITDylib(jd));
    jit_fail("cannot add the object of '" + entry + "'", std::move(err));
  }
  auto symbol = state_->jit->lookup(jd, entry);
  if (!symbol) {
    llvm::consumeError(es.removeJITDylib(jd));
    jit_fail("cannot resolve entry '" + entry + "'", symbol.takeError());
  }
  *handle = &jd;
  return reinterpret_cast<KernelFn>(static_cast<uintptr_t>(symbol->getAddress()));
}

void Jit::unload(void* handle) {
  if (handle == nullptr || !state_->jit) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  llvm::consumeError(state_->jit->getExecutionSession().removeJITDylib(
      *static_cast<llvm::orc::JITDylib*>(handle)));
}

}  // namespace polygrad::cpu_clang
