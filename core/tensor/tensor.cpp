// Tensor core: properties, realisation, host transfer, casts, detach/clone/assign, autograd
// state.
#include "ir/graph.hpp"
#include "runtime/runtime.hpp"
#include "tensor/symbolic.hpp"
#include "tensor/tensor_impl.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace polygrad {

using detail::make;
using detail::TensorImpl;

std::string dtype_name(pg_dtype dtype) {
  return DType(dtype).name();
}

size_t compiled_kernel_count() {
  return runtime::compiled_kernel_count();
}

namespace {

// Tensors whose node is an ASSIGN not yet run. Any realisation whose graph holds such a node
// runs it, and the tensor then points at its (realised) target, so it never runs twice.
std::mutex g_assign_mutex;
std::vector<std::weak_ptr<TensorImpl>> g_pending_assigns;

// ASSIGN nodes that have run while some other graph still holds them (a value built from the
// tensor while its assign was pending: `p.assign(p * 3); p.assign(p + 1)`, or an optimizer's
// `p - m` over m's pending update). A later realisation reads such a node as its target,
// which holds the assigned value, instead of running the assign again over it. An entry only
// this list holds is in no graph any more and goes. Never destroyed: at exit its last
// entries would free buffers whose owners (a Python array's release callback) are gone.
std::vector<UOpRef>& g_ran_assigns = *new std::vector<UOpRef>;

// Drops the ran assigns no graph holds any more (their buffers and values go with them).
void prune_ran_assigns() {
  std::lock_guard<std::mutex> lock(g_assign_mutex);
  size_t keep = 0;
  for (UOpRef& a : g_ran_assigns)
    if (a->use_count() > 1) g_ran_assigns[keep++] = std::move(a);
  g_ran_assigns.resize(keep);
}

// `roots` with every assign that has already run read as its target.
std::vector<UOpRef> without_ran_assigns(const std::vector<UOpRef>& roots) {
  prune_ran_assigns();
  std::lock_guard<std::mutex> lock(g_assign_mutex);
  if (g_ran_assigns.empty()) return roots;
  std::unordered_map<const UOp*, UOpRef> ran;
  for (const UOpRef& a : g_ran_assigns) ran.emplace(a.get(), lazy::assign_root(a.get())->ref());
  std::vector<UOpRef> out;
  for (const UOpRef& r : roots) out.push_back(substitute(r, ran));
  return out;
}

void settle_assigns(const std::vector<UOpRef>& roots) {
  std::lock_guard<std::mutex> lock(g_assign_mutex);
  if (g_pending_assigns.empty()) return;
  // One walk over all roots: their graphs overlap (every update of an optimizer step reads
  // the same backward graph), and a walk per root cost a tenth of an RNN's training step.
  // `roots` as given, before ran assigns were read as their targets: every ASSIGN in them has
  // run now (or before), and graphs built earlier may hold any of them.
  std::unordered_set<const UOp*> ran, known;
  for (const UOpRef& a : g_ran_assigns) known.insert(a.get());
  const UOpRef all = UOp::make(Op::SINK, dtypes::void_, std::span<const UOpRef>(roots));
  for (const UOp* u : toposort(all))
    if (u->op() == Op::ASSIGN) {
      ran.insert(u);
      if (known.insert(u).second) g_ran_assigns.push_back(u->ref());
    }
  size_t keep = 0;
  for (auto& w : g_pending_assigns) {
    std::shared_ptr<TensorImpl> p = w.lock();
    if (!p || p->uop->op() != Op::ASSIGN) continue;
    if (ran.count(p->uop.get())) {
      p->uop = lazy::assign_root(p->uop.get())->ref();
      continue;
    }
    g_pending_assigns[keep++] = w;
  }
  g_pending_assigns.resize(keep);
}

// The movement ops from `u` down to a realised tensor or a pending assign, outermost first;
// nullopt when they reach a lazy computation instead (no buffer to write through them).
std::optional<std::vector<const UOp*>> view_chain(const UOp* u) {
  std::vector<const UOp*> chain;
  for (; !lazy::is_realized(u) && u->op() != Op::ASSIGN; u = u->src(0).get()) {
    if (!is_movement(u->op())) return std::nullopt;
    chain.push_back(u);
  }
  return chain;
}

// `chain` (outermost first) rebuilt over `base`.
UOpRef replay(const std::vector<const UOp*>& chain, UOpRef base) {
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    std::vector<UOpRef> srcs((*it)->srcs().begin(), (*it)->srcs().end());
    srcs[0] = std::move(base);
    base = UOp::make((*it)->op(), (*it)->dtype(), srcs, (*it)->arg());
  }
  return base;
}

// A user error naming the op unless each element of `chain` maps to one element of its base.
void check_writable(const std::vector<const UOp*>& chain) {
  for (const UOp* u : chain)
    if (u->op() == Op::EXPAND || u->op() == Op::PAD)
      user_error(std::string("assign: cannot write through a ") +
                 (u->op() == Op::EXPAND ? "broadcast" : "padded") + " view (" +
                 std::string(op_name(u->op())) +
                 "): its elements are not each one element of the target");
}

std::vector<UOpRef> realize_roots(const std::vector<UOpRef>& given, const std::string& device) {
  std::vector<UOpRef> out = runtime::realize(without_ran_assigns(given), device);
  settle_assigns(given);
  lazy::forget_sym_shapes();
  return out;
}

}  // namespace

Tensor::Tensor() = default;

const Tensor::Shape& Tensor::shape() const {
  return detail::state(*this, "shape").shape;
}
int64_t Tensor::ndim() const {
  return static_cast<int64_t>(shape().size());
}
pg_dtype Tensor::dtype() const {
  return detail::state(*this, "dtype").uop->dtype().scalar();
}
const std::string& Tensor::device() const {
  return detail::state(*this, "device").device;
}
int64_t Tensor::numel() const {
  return lazy::numel(shape());
}
int64_t Tensor::size(int64_t dim) const {
  return shape()[static_cast<size_t>(detail::norm_axis("size", dim, ndim(), shape()))];
}
int64_t Tensor::element_size() const {
  return DType(dtype()).itemsize();
}
Tensor Tensor::T() const {
  return ndim() < 2 ? *this : transpose(-2, -1);
}
bool Tensor::is_realized() const {
  return lazy::is_realized(detail::state(*this, "is_realized").uop.get());
}

Tensor& Tensor::realize() {
  TensorImpl& p = detail::state(*this, "realize");
  if (lazy::is_realized(p.uop.get())) return *this;
  p.uop = realize_roots({p.uop}, p.device).at(0);
  prune_ran_assigns();  // (once the roots above are gone: an assign only they held goes)
  return *this;
}

void Tensor::realize_all(std::vector<Tensor>& tensors) {
  // One schedule per device, in order of first appearance.
  std::vector<std::string> devices;
  for (const Tensor& t : tensors) {
    const std::string& d = detail::state(t, "realize_all").device;
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  for (const std::string& d : devices) {
    std::vector<UOpRef> roots;
    std::vector<TensorImpl*> owners;
    for (const Tensor& t : tensors) {
      TensorImpl* p = t.impl().get();
      if (p->device != d || lazy::is_realized(p->uop.get())) continue;
      roots.push_back(p->uop);
      owners.push_back(p);
    }
    if (roots.empty()) continue;
    // One schedule: the scheduler orders assigns after the reads of their targets (through a
    // temporary when assigns read each other's targets, as an optimizer step's do).
    std::vector<UOpRef> out = realize_roots(roots, d);
    for (size_t i = 0; i < owners.size(); ++i) owners[i]->uop = out.at(i);
  }
  prune_ran_assigns();
}

void Tensor::copy_to_host(void* dst, size_t bytes) const {
  Tensor t = *this;
  t.realize();
  const size_t want = static_cast<size_t>(numel() * element_size());
  if (bytes != want)
    user_error("copy_to_host: destination holds " + std::to_string(bytes) + " bytes, tensor " +
               lazy::shape_str(shape()) + " " + dtype_name(dtype()) + " needs " +
               std::to_string(want));
  runtime::to_host(t.impl()->uop, dst);
}

void Tensor::check_item() const {
  if (numel() != 1)
    user_error("item: tensor of shape " + lazy::shape_str(shape()) + " has " +
               std::to_string(numel()) + " elements, not one");
}

Tensor Tensor::to(const std::string& device) const {
  const TensorImpl& p = detail::state(*this, "to");
  std::string d = runtime::canonical_device(device);
  if (d == p.device) return *this;
  // A graph of constants has nothing to copy: it computes on `d` (a scalar follows where it is
  // used, as an operand's does).
  if (lazy::placement(p.uop.get()) == nullptr) return make(p.uop, p.shape, d);
  return make(lazy::copy_to(p.uop, d), p.shape, d);
}

Tensor Tensor::detach() const {
  const TensorImpl& p = detail::state(*this, "detach");
  return make(lazy::detach(p.uop), p.shape, p.device);
}

Tensor Tensor::contiguous() const {
  const TensorImpl& p = detail::state(*this, "contiguous");
  return make(lazy::contiguous(p.uop), p.shape, p.device);
}

Tensor Tensor::clone() const {
  const TensorImpl& p = detail::state(*this, "clone");
  Tensor c = make(lazy::contiguous(p.uop), p.shape, p.device);
  if (p.requires_grad) c.requires_grad(true);
  return c;
}

Tensor& Tensor::assign(const Tensor& value) {
  TensorImpl& p = detail::state(*this, "assign");
  detail::check_same_device("assign", *this, value);
  Tensor v = detail::broadcast_to("assign", value.cast(dtype()), p.shape);
  // A lazy value gets its buffer first. A pending assign is not run now: the new one targets
  // it, and the schedule writes them in order, each after the reads of the value before it (a
  // value built from p before the first write, realised with them, reads p's old contents).
  // A chain of more than kMaxChain pending writes runs first (the schedule's ordering grows
  // with the square of its items: 5000 took 3 s).
  // A view of a realised tensor (a slice, a transpose) is written through: the write stores
  // at the view's elements of the tensor's buffer and runs at once, as torch's and tinygrad's
  // setitem, so every tensor over that buffer reads the new values.
  if (!lazy::is_realized(p.uop.get()) && p.uop->op() != Op::ASSIGN) {
    std::optional<std::vector<const UOp*>> chain = view_chain(p.uop.get());
    if (chain && !chain->empty()) {
      check_writable(*chain);
      const UOpRef base = chain->back()->src(0);  // realised, or a pending assign to it
      const UOpRef root = lazy::assign_root(base.get())->ref();
      const UOpRef view = replay(*chain, root);
      realize_roots({lazy::assign_view(base, v.impl()->uop, view)}, p.device);
      p.uop = view;
      prune_ran_assigns();
      return *this;
    }
  }
  constexpr int kMaxChain = 64;
  int chain = 0;
  for (const UOp* u = p.uop.get(); u->op() == Op::ASSIGN; u = u->src(0).get()) ++chain;
  if (!lazy::is_realized(p.uop.get()) && (p.uop->op() != Op::ASSIGN || chain >= kMaxChain))
    realize();
  p.uop = lazy::assign(p.uop, v.impl()->uop);
  std::lock_guard<std::mutex> lock(g_assign_mutex);
  g_pending_assigns.push_back(impl_);
  return *this;
}

namespace detail {

void assign_through_view(Tensor& target, const Tensor& view, const Tensor& value) {
  TensorImpl& p = state(target, "assign");
  const TensorImpl& w = state(view, "assign");
  check_same_device("assign", target, value);
  const Tensor v = broadcast_to("assign", value.cast(target.dtype()), w.shape);
  const std::optional<std::vector<const UOp*>> chain = view_chain(w.uop.get());
  const UOp* root = lazy::assign_root(p.uop.get());
  if (!lazy::is_realized(root))
    user_error("assign: the target must be a realised tensor, got a lazy " +
               std::string(op_name(root->op())));
  if (!chain || (chain->empty() ? w.uop.get() : chain->back()->src(0).get()) != root)
    user_error("assign: the view written through is not a view of the assigned tensor");
  check_writable(*chain);
  p.uop = lazy::assign_view(p.uop, v.impl()->uop, w.uop);
  std::lock_guard<std::mutex> lock(g_assign_mutex);
  g_pending_assigns.push_back(target.impl());
}

}  // namespace detail

Tensor Tensor::cast(pg_dtype dtype) const {
  const TensorImpl& p = detail::state(*this, "cast");
  detail::check_dtype("cast", dtype);
  if (p.uop->dtype().scalar() == dtype) return *this;
  return make(lazy::cast(p.uop, DType(dtype)), p.shape, p.device);
}

// ---- autograd state ---------------------------------------------------------------------

namespace detail {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::weak_ptr<TensorImpl>>& registry() {
  static std::vector<std::weak_ptr<TensorImpl>> r;
  return r;
}

std::vector<std::shared_ptr<TensorImpl>> live_grad_leaves() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::shared_ptr<TensorImpl>> out;
  auto& r = registry();
  size_t keep = 0;
  for (auto& w : r) {
    std::shared_ptr<TensorImpl> p = w.lock();
    if (!p) continue;
    r[keep++] = w;
    if (p->requires_grad) out.push_back(std::move(p));
  }
  r.resize(keep);
  return out;
}

}  // namespace detail

bool Tensor::requires_grad() const {
  return detail::state(*this, "requires_grad").requires_grad;
}

Tensor& Tensor::requires_grad(bool on) {
  TensorImpl& p = detail::state(*this, "requires_grad");
  if (on == p.requires_grad) return *this;
  if (on) {
    if (!DType(dtype()).is_float())
      user_error("requires_grad: only float tensors can require gradients, not " +
                 dtype_name(dtype()));
    realize();
    std::lock_guard<std::mutex> lock(detail::registry_mutex());
    detail::registry().push_back(impl_);
  }
  p.requires_grad = on;
  return *this;
}

std::optional<Tensor> Tensor::grad() const {
  const TensorImpl& p = detail::state(*this, "grad");
  if (!p.grad) return std::nullopt;
  return Tensor(p.grad);
}

void Tensor::set_grad(const std::optional<Tensor>& grad) {
  TensorImpl& p = detail::state(*this, "set_grad");
  if (!grad) {
    p.grad.reset();
    return;
  }
  const TensorImpl& g = detail::state(*grad, "set_grad");
  if (g.shape != p.shape)
    user_error("set_grad: gradient shape " + lazy::shape_str(g.shape) +
               " does not match tensor shape " + lazy::shape_str(p.shape));
  if (g.uop->dtype() != p.uop->dtype())
    user_error("set_grad: gradient dtype " + g.uop->dtype().name() +
               " does not match tensor dtype " + p.uop->dtype().name());
  p.grad = grad->impl();
}

}  // namespace polygrad
