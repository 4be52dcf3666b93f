// realize: schedule, plan memory, lower and compile each kernel once, launch in order.
#include "codegen/lower.hpp"
#include "ir/graph.hpp"
#include "runtime/buffers.hpp"
#include "runtime/capture.hpp"
#include "runtime/cross_compile.hpp"
#include "runtime/load_batch.hpp"
#include "runtime/lowered_cache.hpp"
#include "runtime/memory_plan.hpp"
#include "runtime/panel_cache.hpp"
#include "runtime/runtime.hpp"
#include "runtime/schedule_cache.hpp"
#include "runtime/size_templates.hpp"
#include "schedule/schedule.hpp"
#include "support/phase_timing.hpp"

#include <polygrad/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

namespace polygrad::runtime {

namespace {

int debug_level() {
  static const int level = [] {
    const char* v = std::getenv("POLYGRAD_DEBUG");
    return v ? std::atoi(v) : 0;
  }();
  return level;
}

/// Compiled kernels by (device, AST), the least recently used dropped beyond the limit
/// (kMaxPrograms unless set): a
/// loaded program holds memory mappings of its own, and a process that compiled a new kernel
/// per step (a constant that changes every step) ran out of them after about 32000 kernels
/// (vm.max_map_count) and aborted inside LLVM. A dropped kernel lives on while a launch or a
/// capture holds it; used again, it is compiled again (from the plugin's disk cache).
/// A small kernel that differs from an earlier one only in a size runs a kernel generalised
/// over that size (size_templates.hpp); its entry holds the general kernel and the size.
class ProgramCache {
 public:
  static constexpr size_t kMaxPrograms = 4096;
  /// Up to this many loop iterations a general kernel is always worth it: even 5x slower it
  /// would have to run about a thousand times at one size to cost a compile.
  static constexpr int64_t kAlwaysGeneral = int64_t{1} << 15;

  struct Cached {
    std::shared_ptr<CompiledKernel> kernel;
    std::vector<std::pair<std::string, int64_t>>
        sizes;  // the general kernel's size variable, bound for this AST
  };

  void set_limit(size_t limit) {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = std::max<size_t>(limit, 1);
  }

  /// The program for `ast`: its own, or a general kernel's with the size bound. A capture
  /// (`specialize`: replayed many times) compiles every kernel for its sizes.
  Cached get(const std::string& device, const UOpRef& ast,
             const std::vector<std::pair<std::string, int64_t>>& vars, bool specialize) {
    std::lock_guard<std::mutex> lock(mu_);
    Entry* e = find(device, ast);
    if (e && (e->program.sizes.empty() || !specialize)) return e->program;
    const int64_t iterations = e || specialize ? 0 : loop_iterations(ast, vars);
    if (!e && !specialize && iterations <= SizeTemplates::kMaxIterations) {
      std::optional<codegen::LoweredKernel> lowered;
      auto worthwhile = [&](const UOpRef& sample, const UOpRef& general, int64_t size) {
        lowered = lower_cached(general, device_target(device));
        if (iterations <= kAlwaysGeneral) return true;
        Entry* s = find(device, sample);
        if (s && s->program.sizes.empty())
          return keeps_plan(*lowered, s->program.kernel->lowered, vars, size);
        return keeps_plan(*lowered, lower_cached(sample, device_target(device)), vars, size);
      };
      // A general kernel the codegen or the device cannot take is given up on: the kernel is
      // compiled for its sizes, as it would be without templates.
      std::optional<SizeMatch> m;
      try {
        m = templates_.lookup(ast, worthwhile);
        if (m) {
          Entry* g = find(device, m->general);
          std::shared_ptr<CompiledKernel> k =
              g ? g->program.kernel
                : insert(device, m->general, {compile(device, m->general, std::move(lowered)), {}});
          if (iterations > kAlwaysGeneral) {
            // Checked against this kernel's own plan too: the template may come from sizes
            // where the two plans agreed (or from small kernels, never checked).
            codegen::LoweredKernel own = lower_cached(ast, device_target(device));
            if (!keeps_plan(k->lowered, own, vars, m->value))
              return {insert(device, ast, Cached{compile(device, ast, std::move(own)), {}}), {}};
          }
          Cached p{k, {{m->var, m->value}}};
          insert(device, ast, p);
          return p;
        }
      } catch (const CrossCompileError&) {
        throw;
      } catch (const std::exception&) {
        if (m) templates_.forget(m->general);
      }
    }
    if (e) {
      e->program = Cached{compile(device, ast), {}};
      generation_.fetch_add(1, std::memory_order_release);
      return e->program;
    }
    return {insert(device, ast, Cached{compile(device, ast), {}}), {}};
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return programs_.size();
  }

  /// Drops every entry of `kernel`, whose build failed: the next use compiles it again.
  void forget(const std::shared_ptr<CompiledKernel>& kernel) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = order_.begin(); it != order_.end();) {
      auto entry = programs_.find(*it);
      if (entry != programs_.end() && entry->second.program.kernel == kernel) {
        programs_.erase(entry);
        it = order_.erase(it);
        generation_.fetch_add(1, std::memory_order_release);
      } else {
        ++it;
      }
    }
  }

  size_t compiled() {
    std::lock_guard<std::mutex> lock(mu_);
    return compiled_;
  }

  /// Changes whenever an AST's program is replaced or dropped (see program_generation).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  using Key = std::pair<std::string, const UOp*>;
  struct Entry {
    Cached program;
    UOpRef ast;  // keeps the key alive
    std::list<Key>::iterator order;
  };

  Entry* find(const std::string& device, const UOpRef& ast) {
    auto it = programs_.find(std::make_pair(device, ast.get()));
    if (it == programs_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.order);
    return &it->second;
  }

  /// Adds an entry, dropping the least recently used beyond the limit; returns its kernel.
  std::shared_ptr<CompiledKernel> insert(const std::string& device, const UOpRef& ast,
                                         const Cached& p) {
    Key key(device, ast.get());
    order_.push_front(key);
    programs_.emplace(key, Entry{p, ast, order_.begin()});
    while (programs_.size() > limit_) {
      programs_.erase(order_.back());
      generation_.fetch_add(1, std::memory_order_release);
      order_.pop_back();
    }
    return p.kernel;
  }

  /// Whether a general kernel keeps what the codegen made of a kernel it serves (launched with
  /// `vars` and the size `size`): at least its loops (a transpose's tiles), half its vector
  /// lanes (a small matmul's columns would run scalar) and its launch steps, up to 64 (rows
  /// tiled along the batch instead of a now variable length ran serially).
  static bool keeps_plan(const codegen::LoweredKernel& general, const codegen::LoweredKernel& sized,
                         const std::vector<std::pair<std::string, int64_t>>& vars, int64_t size) {
    auto count = [](const codegen::LoweredKernel& k, uint64_t& loops, uint64_t& lanes) {
      for (const pg_instruction& i : k.instructions) {
        if (i.op == PG_OP_RANGE) ++loops;
        if (i.vcount > 1) lanes += i.vcount;
      }
    };
    uint64_t gl = 0, gv = 0, sl = 0, sv = 0;
    count(general, gl, gv);
    count(sized, sl, sv);
    std::unordered_map<std::string, int64_t> vals(vars.begin(), vars.end());
    auto threads = [&](const codegen::LoweredKernel& k) {
      const std::array<uint32_t, 3> g = k.launch_global(vals);
      return std::min<uint64_t>(uint64_t{g[0]} * g[1] * g[2], 64);
    };
    const uint64_t sized_threads = threads(sized);
    vals.emplace(SizeTemplates::kVar, size);
    return gl >= sl && 2 * gv >= sv && threads(general) >= sized_threads;
  }

  std::shared_ptr<CompiledKernel> compile(const std::string& device, const UOpRef& ast,
                                          std::optional<codegen::LoweredKernel> lowered = {}) {
    Device dev = device_handle(device);
    auto k = std::make_shared<CompiledKernel>();
    k->ast = ast;
    k->lowered = lowered ? std::move(*lowered) : lower_cached(ast, device_target(device));
    pg_kernel_program prog = k->lowered.program();
    Artifact art = [&] {
      timing::Timed timed(timing::Phase::render);
      return dev.render(prog);
    }();
    if (debug_level() >= 3)
      std::fprintf(stderr, "polygrad: kernel %s on %s:\n%s\n", k->lowered.name.c_str(),
                   device.c_str(), art.text().c_str());
    if (LoadBatch* batch = LoadBatch::current(); batch != nullptr && dev.concurrent_load()) {
      batch->add(dev, k, std::move(art));
    } else {
      timing::Timed timed(timing::Phase::load);
      k->program = dev.load(art, prog);
    }
    cross_compile(ast, k->lowered.name);
    ++compiled_;
    return k;
  }

  std::mutex mu_;
  size_t limit_ = kMaxPrograms;
  std::list<Key> order_;  // most recently used first
  std::map<Key, Entry> programs_;
  SizeTemplates templates_;
  size_t compiled_ = 0;
  std::atomic<uint64_t> generation_{0};
};

ProgramCache& program_cache() {
  static ProgramCache* c = new ProgramCache;
  return *c;
}

}  // namespace

size_t compiled_kernel_count() {
  return program_cache().compiled();
}

uint64_t program_generation() {
  return program_cache().generation();
}

size_t loaded_kernel_count() {
  return program_cache().size();
}

void set_loaded_kernel_limit(size_t limit) {
  program_cache().set_limit(limit);
}

void plan_memory(const schedule::Schedule& s) {
  auto fresh = [](const UOp* b) { return !buffer_allocated(b); };
  for (const SharedMemory& m : plan_shared_memory(s, fresh, buffer_device))
    alias_buffer(m.buffer, buffer_memory(m.owner));
}

KernelLaunch prepare_kernel(const schedule::Item& item) {
  ProgramCache::Cached p = program_cache().get(item.device, item.ast, item.vars, capturing());
  KernelLaunch k;
  k.kernel = p.kernel;
  std::unordered_map<std::string, int64_t> vals(item.vars.begin(), item.vars.end());
  vals.insert(p.sizes.begin(), p.sizes.end());
  for (const Var& v : k.kernel->lowered.vars) {
    auto it = vals.find(v.name);
    if (it == vals.end())
      internal_error("realize: kernel " + k.kernel->lowered.name + " needs variable " + v.name);
    k.scalars.push_back(it->second);
  }
  k.global = k.kernel->lowered.launch_global(vals);
  return k;
}

Launch launch_over(const schedule::Item& item, std::span<const UOp* const> buffers,
                   KernelLaunch kernel) {
  Launch l;
  l.device = item.device;
  if (!buffers.empty()) l.writes = lazy::buffer_id(buffers[0]);
  l.memory.reserve(buffers.size());
  try {
    for (const UOp* b : buffers) l.memory.push_back(buffer_memory(b));
  } catch (const Error& e) {
    // (The plugin's message names the device; this names the step that needed the memory.)
    const std::string step = !kernel.kernel
                                 ? std::string("a copy to ") + item.device
                                 : "kernel '" + kernel.kernel->lowered.name + "' on " + item.device;
    throw Error(e.kind(),
                "realize: allocating buffer slot " + std::to_string(l.memory.size()) + " of " +
                    step + ": " + e.what(),
                e.status());
  }
  if (item.kind == schedule::Item::Kind::copy) {
    l.kind = Launch::Kind::copy;
    l.source_device = buffer_device(buffers[1]);
    l.nbytes = static_cast<uint64_t>(item.nbytes);
    return l;
  }
  l.kernel = std::move(kernel.kernel);
  l.scalars = std::move(kernel.scalars);
  l.global = kernel.global;
  return l;
}

Launch prepare_launch(const schedule::Item& item) {
  std::vector<const UOp*> buffers;
  for (const UOpRef& b : item.buffers) buffers.push_back(b.get());
  const bool copy = item.kind == schedule::Item::Kind::copy;
  return launch_over(item, buffers, copy ? KernelLaunch{} : prepare_kernel(item));
}

void execute(const Launch& l) {
  timing::Timed timed(timing::Phase::launch);
  if (l.writes != 0) note_packing_source_write(l.writes);
  if (l.kind == Launch::Kind::host) {
    device_handle(l.device).synchronize();  // the step reads what the kernels wrote
    l.host(l.memory);
    return;
  }
  if (l.kind == Launch::Kind::copy) {
    device_handle(l.source_device).synchronize();
    device_handle(l.device).copy_device(*l.memory[0], *l.memory[1], l.nbytes);
    if (debug_level() >= 1)
      std::fprintf(stderr, "polygrad: copy %lld bytes %s -> %s\n", static_cast<long long>(l.nbytes),
                   l.source_device.c_str(), l.device.c_str());
    return;
  }
  const CompiledKernel& k = *l.kernel;
  Device dev = device_handle(l.device);
  LaunchArgs args;
  for (const auto& m : l.memory) args.buffers.push_back(m.get());
  args.scalars = l.scalars;
  for (int d = 0; d < 3; ++d) args.global_size[d] = l.global[d];
  args.local_size = k.lowered.local_size;
  if (debug_level() >= 1) {
    const Program& program = loaded_program(k);  // (its build is not the run's time)
    auto start = std::chrono::steady_clock::now();
    dev.launch(program, args);
    dev.synchronize();
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "polygrad: %-28s %-8s global [%u, %u, %u] local [%u, %u, %u] %10.1f us\n",
                 k.lowered.name.c_str(), l.device.c_str(), l.global[0], l.global[1], l.global[2],
                 args.local_size[0], args.local_size[1], args.local_size[2], us);
    return;
  }
  dev.launch(loaded_program(k), args);
}

namespace {

void print_schedule(const schedule::Schedule& s) {
  std::fprintf(stderr, "polygrad: schedule of %zu items\n", s.items.size());
  for (size_t i = 0; i < s.items.size(); ++i) {
    const schedule::Item& it = s.items[i];
    if (it.kind == schedule::Item::Kind::copy) {
      std::fprintf(stderr, "  [%zu] copy %lld bytes to %s\n", i, static_cast<long long>(it.nbytes),
                   it.device.c_str());
      continue;
    }
    std::fprintf(stderr, "  [%zu] kernel on %s, %zu buffers:\n%s", i, it.device.c_str(),
                 it.buffers.size(), to_string(it.ast).c_str());
  }
}

// While capturing: an output no item writes (a tensor the captured code was given, or a view of
// it) is copied into a new buffer by a recorded copy, so a replay with that tensor replaced by
// another (Capture::run) leaves the new values in the output, as in every other output.
std::vector<UOpRef> fresh_outputs(const schedule::Schedule& s) {
  std::set<const UOp*> written;
  for (const schedule::Item& item : s.items) written.insert(item.buffers[0].get());
  std::vector<UOpRef> out = s.outputs;
  for (UOpRef& o : out) {
    const UOp* buf = lazy::realized_buffer(o.get());
    if (written.count(buf)) continue;
    const int64_t count = lazy::buffer_count(buf);
    const std::string device = buffer_device(buf);
    UOpRef copy = new_buffer(device, buf->dtype(), count);
    record(prepare_launch({schedule::Item::Kind::copy,
                           device,
                           {},
                           {copy, buf->ref()},
                           count * buf->dtype().itemsize(),
                           {}}));
    o = lazy::reshape(copy, lazy::shape_of(o));
  }
  return out;
}

}  // namespace

std::vector<UOpRef> realize(const std::vector<UOpRef>& roots, const std::string& device) {
  std::optional<BoundSchedule> scheduled;
  {
    timing::Timed timed(timing::Phase::schedule);
    scheduled.emplace(bind_schedule(roots, device));
  }
  BoundSchedule& bound = *scheduled;
  if (debug_level() >= 2) print_schedule(bound.materialize());
  // Every kernel's program first: the new ones build side by side where the device allows it,
  // each launch waiting for its own (load_batch.hpp).
  LoadBatch batch([](const std::shared_ptr<CompiledKernel>& k) { program_cache().forget(k); });
  if (capturing()) {
    schedule::Schedule s = bound.materialize();
    plan_memory(s);
    for (const schedule::Item& item : s.items) record(prepare_launch(item));
    batch.finish();  // a kernel that fails to build fails the capture, not a later replay
    return fresh_outputs(s);
  }
  // (Held until launched: the program cache may drop one while a later one compiles.)
  std::vector<KernelLaunch> kernels;
  kernels.reserve(bound.size());
  for (size_t i = 0; i < bound.size(); ++i) kernels.push_back(bound.prepare(i));
  bound.share_memory();
  std::vector<std::string> used;
  for (size_t i = 0; i < bound.size(); ++i) {
    const schedule::Item& item = bound.item(i);
    std::optional<PackingUse> packing;
    if (item.packing) {
      packing.emplace(item, bound.buffer(i, item.packing->source), bound.buffer(i, 0));
      if (!packing->must_run()) {
        if (debug_level() >= 1)
          std::fprintf(stderr, "polygrad: %-28s %-8s copy into panels, kept (part %d)\n",
                       "(panel cache)", item.device.c_str(), item.packing->part);
        continue;
      }
    }
    Launch l = bound.launch(i, std::move(kernels[i]));
    execute(l);
    if (packing) packing->ran();
    if (std::find(used.begin(), used.end(), l.device) == used.end()) used.push_back(l.device);
  }
  {
    timing::Timed timed(timing::Phase::launch);
    for (const std::string& d : used) device_handle(d).synchronize();
  }
  return bound.outputs();
}

UOpRef from_host(const std::string& device, DType dtype, const lazy::Shape& shape,
                 const void* data) {
  const int64_t n = lazy::numel(shape);
  UOpRef buf = new_buffer(device, dtype, n);
  std::shared_ptr<Buffer> mem = buffer_memory(buf.get());
  const uint64_t nbytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(dtype.itemsize());
  if (nbytes) device_handle(device).copy_in(*mem, data, nbytes);
  return lazy::reshape(buf, shape);
}

UOpRef from_host_fill(const std::string& device, DType dtype, const lazy::Shape& shape,
                      const FillFn& fill) {
  const int64_t n = lazy::numel(shape);
  UOpRef buf = new_buffer(device, dtype, n);
  std::shared_ptr<Buffer> mem = buffer_memory(buf.get());
  const int64_t item = dtype.itemsize();
  if (n == 0) return lazy::reshape(buf, shape);
  if (void* host = mem->host_pointer()) {
    fill(host, 0, n);
    return lazy::reshape(buf, shape);
  }
  const int64_t per = std::max<int64_t>(1, kFillPartBytes / item);
  std::vector<unsigned char> part(static_cast<size_t>(std::min(per, n) * item));
  Device dev = device_handle(device);
  for (int64_t first = 0; first < n; first += per) {
    const int64_t count = std::min(per, n - first);
    fill(part.data(), first, count);
    dev.copy_in(*mem, part.data(), static_cast<uint64_t>(count * item),
                static_cast<uint64_t>(first * item));
  }
  return lazy::reshape(buf, shape);
}

UOpRef from_host_memory(const std::string& device, DType dtype, const lazy::Shape& shape,
                        void* data, std::function<void()> release, bool* shared) {
  ReleaseOnce guard(std::move(release));
  *shared = false;
  const int64_t n = lazy::numel(shape);
  const uint64_t nbytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(dtype.itemsize());
  if (nbytes == 0 || data == nullptr) return from_host(device, dtype, shape, data);
  Buffer wrapped = device_handle(device).wrap_host(data, nbytes);
  if (!wrapped.valid()) return from_host(device, dtype, shape, data);
  UOpRef buf = new_buffer(device, dtype, n);
  auto on_free = std::make_shared<std::function<void()>>(guard.take());
  alias_buffer(buf.get(),
               std::shared_ptr<Buffer>(new Buffer(std::move(wrapped)), [on_free](Buffer* dead) {
                 delete dead;  // the handle first
                 (*on_free)();
               }));
  mark_buffer_external(buf.get());
  *shared = true;
  return lazy::reshape(buf, shape);
}

void to_host(const UOpRef& realized, void* dst) {
  if (capturing())
    user_error(
        "cannot read a tensor's values while capturing: nothing has run yet (return the "
        "tensor from the captured function and read it after a run)");
  if (!lazy::is_realized(realized.get()))
    internal_error("to_host: the tensor is not realised: " + node_to_string(*realized));
  const UOp* buf = lazy::realized_buffer(realized.get());
  const uint64_t nbytes = static_cast<uint64_t>(lazy::buffer_count(buf)) *
                          static_cast<uint64_t>(buf->dtype().itemsize());
  if (!nbytes) return;
  timing::Timed timed(timing::Phase::copy_out);
  std::shared_ptr<Buffer> mem = buffer_memory(buf);
  Device dev = device_handle(buffer_device(buf));
  dev.synchronize();
  dev.copy_out(dst, *mem, nbytes);
}

}  // namespace polygrad::runtime
