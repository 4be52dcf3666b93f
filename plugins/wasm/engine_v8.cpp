// The `v8` engine: V8 embedded in-process (from Debian's libnode108), modules compiled by
// Liftoff then TurboFan in the background (`compile: tiered`) or by TurboFan alone at load
// (`compile: optimized`), out-of-bounds accesses caught by V8's WebAssembly trap
// handler (guard pages and a SIGSEGV handler; V8 bounds-checks explicitly where it cannot be
// installed). Built alone as libpolygrad_wasm_v8.so, which links libnode and exports only
// polygrad_wasm_v8_engine; the plugin loads it when it first makes a v8 engine
// (engine_v8_loader.cpp).
#include <polygrad/plugin_error.hpp>

#include <libplatform/libplatform.h>
#include <v8.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine.hpp"
#include "renderer.hpp"

namespace polygrad::wasm {
namespace {

using sdk::fail;

const char* compile_name(V8Compile c) {
  return c == V8Compile::kTiered ? "tiered" : "optimized";
}

/// V8, once per process: it cannot be initialised again after it is disposed, so it never is.
struct V8Process {
  std::unique_ptr<v8::Platform> platform;
  bool trap_handler = false;
  V8Compile compile = V8Compile::kTiered;  ///< fixed by the flags of the first engine
};

V8Process* g_v8 = nullptr;  ///< set by the first v8_process(compile)

/// V8, initialised by the first call with the flags `compile` asks (V8's flags are the
/// process's, and are not changed once it runs).
V8Process& v8_process(V8Compile compile) {
  static V8Process* process = [compile] {
    auto* p = new V8Process;
    p->compile = compile;
    // tiered: Liftoff compiles the module at load (a fraction of TurboFan's time), then one
    // background task compiles all of it with TurboFan (eager tier-up, not V8's dynamic
    // tiering, which waits for a function to be hot); a launch after that task finishes calls
    // TurboFan's code (a call already running stays in Liftoff's). optimized: TurboFan on the
    // loading thread, no background task. Never lazy: a kernel is compiled when it is loaded.
    const char* flags = compile == V8Compile::kTiered
                            ? "--liftoff --wasm-tier-up --no-wasm-dynamic-tiering "
                              "--no-wasm-lazy-compilation --wasm-num-compilation-tasks=1"
                            : "--no-liftoff --no-wasm-tier-up --no-wasm-lazy-compilation "
                              "--wasm-num-compilation-tasks=0";
    v8::V8::SetFlagsFromString(flags);
    // V8 10.2 otherwise write-protects the code space with mprotect around every code write
    // (several per module), and each change of a mapping's protection interrupts the process's
    // other threads to flush their TLBs: that was half of a small kernel's load (bench_wasm_engine
    // load/v8, 2 cores: 337-432 -> 132-183 us). The protection is against a bug in V8 itself
    // being exploited; a kernel's own stores reach only its bounds-checked linear memory.
    v8::V8::SetFlagsFromString("--no-wasm-write-protect-code-memory");
    // Installs V8's SIGSEGV handler; a fault outside WebAssembly code goes on to the handler
    // that was there before (the default action, Python's faulthandler, AddressSanitizer's).
    p->trap_handler = v8::V8::EnableWebAssemblyTrapHandler(true);
    // One worker thread: the tiered mode's background compile (and V8's GC helpers).
    p->platform = v8::platform::NewDefaultPlatform(1);
    v8::V8::InitializePlatform(p->platform.get());
    v8::V8::Initialize();
    g_v8 = p;
    return p;
  }();
  if (process->compile != compile)
    fail(PG_ERR_INVALID_ARGUMENT, std::string("wasm: option compile: '") + compile_name(compile) +
                                      "' cannot be used: V8 in this process already compiles '" +
                                      compile_name(process->compile) +
                                      "' (its flags are set once per process)");
  return *process;
}

/// V8 once initialised (every engine is made after v8_process(compile) returned).
V8Process& v8_process() {
  return *g_v8;
}

/// An isolate with one context, shared by the engine and the modules it loaded, so that a
/// module may outlive the engine.
struct IsolateHolder {
  IsolateHolder() {
    allocator.reset(v8::ArrayBuffer::Allocator::NewDefaultAllocator());
    v8::Isolate::CreateParams params;
    params.array_buffer_allocator = allocator.get();
    isolate = v8::Isolate::New(params);
    v8::Locker locker(isolate);
    v8::Isolate::Scope isolate_scope(isolate);
    v8::HandleScope scope(isolate);
    context.Reset(isolate, v8::Context::New(isolate));
  }
  ~IsolateHolder() {
    {
      v8::Locker locker(isolate);
      v8::Isolate::Scope isolate_scope(isolate);
      memory.Reset();
      context.Reset();
    }
    isolate->Dispose();
  }
  /// Runs the platform's pending tasks for this isolate (garbage collection's, compilation's).
  void pump() {
    while (v8::platform::PumpMessageLoop(v8_process().platform.get(), isolate)) {
    }
  }

  std::unique_ptr<v8::ArrayBuffer::Allocator> allocator;
  v8::Isolate* isolate = nullptr;
  v8::Global<v8::Context> context;
  v8::Global<v8::Object> memory;  ///< the WebAssembly.Memory
};

/// Enters the isolate and its context from the calling thread.
class Enter {
 public:
  explicit Enter(IsolateHolder& h)
      : locker_(h.isolate),
        isolate_scope_(h.isolate),
        handles_(h.isolate),
        context_(h.context.Get(h.isolate)),
        context_scope_(context_) {}
  v8::Local<v8::Context> context() const { return context_; }

 private:
  v8::Locker locker_;
  v8::Isolate::Scope isolate_scope_;
  v8::HandleScope handles_;
  v8::Local<v8::Context> context_;
  v8::Context::Scope context_scope_;
};

v8::Local<v8::String> str(v8::Isolate* isolate, const char* s) {
  return v8::String::NewFromUtf8(isolate, s).ToLocalChecked();
}

/// The message of the exception `tc` caught, e.g. "RuntimeError: memory access out of bounds".
std::string message(v8::Isolate* isolate, const v8::TryCatch& tc) {
  if (!tc.HasCaught()) return "no exception";
  v8::String::Utf8Value text(isolate, tc.Exception());
  return *text ? std::string(*text, text.length()) : std::string("an exception");
}

/// `object[key]`, an error naming `what` when it is missing.
v8::Local<v8::Value> get(v8::Local<v8::Context> context, v8::Local<v8::Object> object,
                         const char* key, const std::string& what) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::Value> value;
  if (!object->Get(context, str(isolate, key)).ToLocal(&value) || value->IsUndefined())
    fail(PG_ERR_INTERNAL, "wasm: v8: " + what + " has no '" + key + "'");
  return value;
}

/// `object[key] = value`.
void set(v8::Local<v8::Context> context, v8::Local<v8::Object> object, const char* key,
         v8::Local<v8::Value> value) {
  if (!object->Set(context, str(context->GetIsolate(), key), value).FromMaybe(false))
    fail(PG_ERR_INTERNAL, std::string("wasm: v8: cannot set '") + key + "'");
}

v8::Local<v8::Object> web_assembly(v8::Local<v8::Context> context) {
  return get(context, context->Global(), "WebAssembly", "the global object").As<v8::Object>();
}

class V8Memory : public LinearMemory {
 public:
  explicit V8Memory(std::shared_ptr<IsolateHolder> holder) : holder_(std::move(holder)) {
    Enter enter(*holder_);
    v8::Isolate* isolate = holder_->isolate;
    v8::Local<v8::Context> context = enter.context();
    v8::Local<v8::Object> descriptor = v8::Object::New(isolate);
    set(context, descriptor, "initial", v8::Integer::New(isolate, 0));
    set(context, descriptor, "maximum",
        v8::Integer::New(isolate, static_cast<int32_t>(kMaxMemoryBytes / kPageBytes)));
    v8::Local<v8::Function> ctor =
        get(context, web_assembly(context), "Memory", "WebAssembly").As<v8::Function>();
    v8::TryCatch tc(isolate);
    v8::Local<v8::Value> args[] = {descriptor};
    v8::Local<v8::Object> memory;
    if (!ctor->NewInstance(context, 1, args).ToLocal(&memory))
      fail(PG_ERR_OUT_OF_MEMORY, "wasm: v8: no WebAssembly.Memory: " + message(isolate, tc));
    holder_->memory.Reset(isolate, memory);
    refresh(context);
  }
  uint8_t* data() override { return data_; }
  uint64_t size() const override { return size_; }
  bool grow_to(uint64_t bytes) override {
    if (bytes <= size_) return true;
    Enter enter(*holder_);
    v8::Isolate* isolate = holder_->isolate;
    v8::Local<v8::Context> context = enter.context();
    v8::Local<v8::Object> memory = holder_->memory.Get(isolate);
    v8::Local<v8::Function> grow =
        get(context, memory, "grow", "WebAssembly.Memory").As<v8::Function>();
    uint64_t pages = (bytes - size_ + kPageBytes - 1) / kPageBytes;
    v8::Local<v8::Value> args[] = {v8::Number::New(isolate, static_cast<double>(pages))};
    v8::TryCatch tc(isolate);
    bool grown = !grow->Call(context, memory, 1, args).IsEmpty();
    refresh(context);  // the buffer moves when it grows
    return grown;
  }

 private:
  void refresh(v8::Local<v8::Context> context) {
    v8::Local<v8::Object> memory = holder_->memory.Get(holder_->isolate);
    // (ArrayBuffer::Data, not GetBackingStore: a shared_ptr made inside libnode, which has no
    // RTTI, trips UBSan's vptr check wherever its count is dropped)
    auto buffer = get(context, memory, "buffer", "WebAssembly.Memory").As<v8::ArrayBuffer>();
    data_ = static_cast<uint8_t*>(buffer->Data());
    size_ = buffer->ByteLength();
  }

  std::shared_ptr<IsolateHolder> holder_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

class V8Module : public LoadedModule {
 public:
  V8Module(std::shared_ptr<IsolateHolder> holder, v8::Local<v8::Object> instance,
           v8::Local<v8::Function> func)
      : holder_(std::move(holder)),
        instance_(holder_->isolate, instance),
        func_(holder_->isolate, func) {}
  ~V8Module() override {
    v8::Locker locker(holder_->isolate);
    v8::Isolate::Scope isolate_scope(holder_->isolate);
    func_.Reset();
    instance_.Reset();
  }

  void call(const KernelCall& c) override {
    Enter enter(*holder_);
    v8::Isolate* isolate = holder_->isolate;
    args_.clear();
    for (uint32_t b : c.buffers) args_.push_back(v8::Integer::NewFromUnsigned(isolate, b));
    for (int64_t s : c.scalars) args_.push_back(v8::BigInt::New(isolate, s));
    args_.push_back(v8::Integer::NewFromUnsigned(isolate, c.scratch));
    for (uint32_t n : c.count) args_.push_back(v8::Integer::NewFromUnsigned(isolate, n));
    for (uint32_t l : c.local_size) args_.push_back(v8::Integer::NewFromUnsigned(isolate, l));
    v8::TryCatch tc(isolate);
    v8::Local<v8::Function> func = func_.Get(isolate);
    if (func->Call(enter.context(), v8::Undefined(isolate), static_cast<int>(args_.size()),
                   args_.data())
            .IsEmpty())
      fail(PG_ERR_LAUNCH, "wasm: kernel '" + entry + "' trapped: " + message(isolate, tc));
  }

 private:
  std::shared_ptr<IsolateHolder> holder_;
  v8::Global<v8::Object> instance_;
  v8::Global<v8::Function> func_;
  std::vector<v8::Local<v8::Value>> args_;
};

class V8Engine : public Engine {
 public:
  explicit V8Engine(V8Compile compile)
      : compile_(compile), holder_(std::make_shared<IsolateHolder>()), memory_(holder_) {}
  const char* name() const override { return "v8"; }
  std::string describe() const override {
    return std::string("V8 ") + v8::V8::GetVersion() +
           (v8_process().trap_handler ? ", trap handler on (guard pages)"
                                      : ", trap handler off (explicit bounds checks)") +
           (compile_ == V8Compile::kTiered
                ? ", compile tiered (Liftoff, then TurboFan in the background)"
                : ", compile optimized (TurboFan at load)");
  }
  LinearMemory& memory() override { return memory_; }

  std::unique_ptr<LoadedModule> load(const void* bytes, uint64_t size,
                                     const std::string& entry) override {
    Enter enter(*holder_);
    v8::Isolate* isolate = holder_->isolate;
    v8::Local<v8::Context> context = enter.context();
    v8::TryCatch tc(isolate);
    v8::Local<v8::WasmModuleObject> module;
    if (!v8::WasmModuleObject::Compile(
             isolate, {static_cast<const uint8_t*>(bytes), static_cast<size_t>(size)})
             .ToLocal(&module))
      fail(PG_ERR_COMPILE,
           "wasm: module '" + entry + "' does not compile: " + message(isolate, tc));
    v8::Local<v8::Object> env = v8::Object::New(isolate), imports = v8::Object::New(isolate);
    set(context, env, "memory", holder_->memory.Get(isolate));
    set(context, imports, "env", env);
    v8::Local<v8::Function> ctor =
        get(context, web_assembly(context), "Instance", "WebAssembly").As<v8::Function>();
    v8::Local<v8::Value> args[] = {module, imports};
    v8::Local<v8::Object> instance;
    if (!ctor->NewInstance(context, 2, args).ToLocal(&instance))
      fail(PG_ERR_COMPILE,
           "wasm: module '" + entry + "' does not instantiate: " + message(isolate, tc));
    v8::Local<v8::Object> exports =
        get(context, instance, "exports", "an instance").As<v8::Object>();
    v8::Local<v8::Value> func;
    if (!exports->Get(context, str(isolate, entry.c_str())).ToLocal(&func) || !func->IsFunction())
      fail(PG_ERR_COMPILE, "wasm: module exports no function '" + entry + "'");
    uint32_t globals[4] = {0, 0, 0, 0};
    const char* names[4] = {kBuffersGlobal, kScalarsGlobal, kScratchGlobal, kGroupMemoryGlobal};
    for (int g = 0; g < 4; ++g) {
      v8::Local<v8::Value> global, value;
      if (!exports->Get(context, str(isolate, names[g])).ToLocal(&global) || !global->IsObject() ||
          !global.As<v8::Object>()->Get(context, str(isolate, "value")).ToLocal(&value) ||
          !value->IsUint32())
        fail(PG_ERR_COMPILE, "wasm: module '" + entry + "' exports no global " + names[g]);
      globals[g] = value.As<v8::Uint32>()->Value();
    }
    auto loaded = std::make_unique<V8Module>(holder_, instance, func.As<v8::Function>());
    loaded->entry = entry;
    loaded->buffers = globals[0];
    loaded->scalars = globals[1];
    loaded->scratch_bytes = globals[2];
    loaded->group_memory = globals[3] != 0;
    holder_->pump();
    return loaded;
  }

 private:
  V8Compile compile_;
  std::shared_ptr<IsolateHolder> holder_;
  V8Memory memory_;
};

}  // namespace
}  // namespace polygrad::wasm

/// The library's entry (engine.hpp's V8EngineEntry): a new v8 engine, or NULL with a status
/// and the reason. Nothing is thrown across it.
extern "C" __attribute__((visibility("default"))) polygrad::wasm::Engine* polygrad_wasm_v8_engine(
    uint32_t interface, uint32_t compile, int* status, char* error, size_t error_size) {
  using namespace polygrad::wasm;
  auto refuse = [&](int s, const std::string& why) -> Engine* {
    *status = s;
    if (error_size > 0) std::snprintf(error, error_size, "%s", why.c_str());
    return nullptr;
  };
  if (interface != kEngineInterface)
    return refuse(PG_ERR_VERSION, "wasm: " + std::string(kV8EngineFile) + " has engine interface " +
                                      std::to_string(kEngineInterface) + ", the plugin " +
                                      std::to_string(interface) + " (a library of another build)");
  if (compile != static_cast<uint32_t>(V8Compile::kTiered) &&
      compile != static_cast<uint32_t>(V8Compile::kOptimized))
    return refuse(PG_ERR_INVALID_ARGUMENT,
                  "wasm: v8: no way of compiling " + std::to_string(compile));
  try {
    v8_process(static_cast<V8Compile>(compile));
    return new V8Engine(static_cast<V8Compile>(compile));
  } catch (const polygrad::sdk::Error& e) {
    return refuse(e.status(), e.what());
  } catch (const std::exception& e) {
    return refuse(PG_ERR_INTERNAL, std::string("wasm: v8: ") + e.what());
  }
}
