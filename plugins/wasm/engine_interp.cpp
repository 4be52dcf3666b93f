// The `interp` engine: wabt's interpreter (libwabt). Slow, but independent of any JIT: the
// reference other engines are held against. Its reader validates every module it loads.
#include <polygrad/plugin_error.hpp>

#include <wabt/binary-reader.h>
#include <wabt/error-formatter.h>
#include <wabt/interp/binary-reader-interp.h>
#include <wabt/interp/interp.h>

#include "engine.hpp"
#include "renderer.hpp"

namespace polygrad::wasm {
namespace {

namespace wi = wabt::interp;
using sdk::fail;

class InterpMemory : public LinearMemory {
 public:
  explicit InterpMemory(wi::Store& store)
      : store_(store),
        memory_(wi::Memory::New(store,
                                wi::MemoryType{wabt::Limits(0, kMaxMemoryBytes / kPageBytes)})) {}
  uint8_t* data() override { return memory_->UnsafeData(); }
  uint64_t size() const override { return memory_->ByteSize(); }
  bool grow_to(uint64_t bytes) override {
    uint64_t have = memory_->ByteSize();
    if (bytes <= have) return true;
    return wabt::Succeeded(memory_->Grow((bytes - have + kPageBytes - 1) / kPageBytes));
  }
  wi::Ref ref() const { return memory_.ref(); }

 private:
  wi::Store& store_;
  wi::Memory::Ptr memory_;
};

class InterpModule : public LoadedModule {
 public:
  InterpModule(wi::Store& store, wi::Instance::Ptr instance, wi::Func::Ptr func)
      : store_(store), instance_(std::move(instance)), func_(std::move(func)) {}
  void call(const KernelCall& c) override {
    wi::Values params, results;
    for (uint32_t b : c.buffers) params.push_back(wi::Value::Make(b));
    for (int64_t s : c.scalars) params.push_back(wi::Value::Make(static_cast<wi::s64>(s)));
    params.push_back(wi::Value::Make(c.scratch));
    for (uint32_t n : c.count) params.push_back(wi::Value::Make(n));
    for (uint32_t l : c.local_size) params.push_back(wi::Value::Make(l));
    wi::Trap::Ptr trap;
    if (wabt::Failed(func_->Call(store_, params, results, &trap)))
      fail(PG_ERR_LAUNCH, "wasm: kernel '" + entry + "' trapped: " +
                              (trap ? trap->message() : std::string("unknown trap")));
  }

 private:
  wi::Store& store_;
  wi::Instance::Ptr instance_;
  wi::Func::Ptr func_;
};

class InterpEngine : public Engine {
 public:
  InterpEngine() : memory_(store_) {}
  const char* name() const override { return "interp"; }
  std::string describe() const override { return "wabt's interpreter, bounds-checked"; }
  LinearMemory& memory() override { return memory_; }

  std::unique_ptr<LoadedModule> load(const void* bytes, uint64_t size,
                                     const std::string& entry) override {
    wabt::Errors errors;
    wi::ModuleDesc desc;
    wabt::Features features;  // wabt's defaults: SIMD, saturating conversions, sign extension
    wabt::ReadBinaryOptions options(features, nullptr, false, true, true);
    if (wabt::Failed(wi::ReadBinaryInterp(entry, bytes, size, options, &errors, &desc)))
      fail(PG_ERR_COMPILE, "wasm: module '" + entry + "' does not validate: " +
                               wabt::FormatErrorsToString(errors, wabt::Location::Type::Binary));
    wi::Module::Ptr module = wi::Module::New(store_, desc);
    wi::RefVec imports;
    for (const auto& import : module->desc().imports) {
      if (import.type.type->kind != wabt::ExternalKind::Memory)
        fail(PG_ERR_COMPILE, "wasm: module '" + entry + "' imports " + import.type.module + "." +
                                 import.type.name + ", which is not a memory");
      imports.push_back(memory_.ref());
    }
    wi::Trap::Ptr trap;
    wi::Instance::Ptr instance = wi::Instance::Instantiate(store_, module.ref(), imports, &trap);
    if (!instance)
      fail(PG_ERR_COMPILE, "wasm: module '" + entry + "' does not instantiate: " +
                               (trap ? trap->message() : std::string("unknown reason")));
    wi::Func::Ptr func;
    uint32_t globals[4] = {0, 0, 0, 0};
    bool found[4] = {false, false, false, false};
    const char* names[4] = {kBuffersGlobal, kScalarsGlobal, kScratchGlobal, kGroupMemoryGlobal};
    const auto& exports = module->export_types();
    for (size_t k = 0; k < exports.size(); ++k) {
      wi::Ref ref = instance->exports()[k];
      if (exports[k].name == entry && exports[k].type->kind == wabt::ExternalKind::Func)
        func = store_.UnsafeGet<wi::Func>(ref);
      for (int g = 0; g < 4; ++g) {
        if (exports[k].name == names[g] && exports[k].type->kind == wabt::ExternalKind::Global) {
          wi::Global::Ptr global = store_.UnsafeGet<wi::Global>(ref);
          globals[g] = global->Get().Get<wi::u32>();
          found[g] = true;
        }
      }
    }
    if (!func) fail(PG_ERR_COMPILE, "wasm: module exports no function '" + entry + "'");
    for (int g = 0; g < 4; ++g)
      if (!found[g])
        fail(PG_ERR_COMPILE, "wasm: module '" + entry + "' exports no global " + names[g]);
    auto loaded = std::make_unique<InterpModule>(store_, std::move(instance), std::move(func));
    loaded->entry = entry;
    loaded->buffers = globals[0];
    loaded->scalars = globals[1];
    loaded->scratch_bytes = globals[2];
    loaded->group_memory = globals[3] != 0;
    return loaded;
  }

 private:
  wi::Store store_;
  InterpMemory memory_;
};

}  // namespace

std::unique_ptr<Engine> make_interp_engine() {
  return std::make_unique<InterpEngine>();
}

}  // namespace polygrad::wasm
