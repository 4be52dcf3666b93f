// plan_tiles(): the tile form of the group strategy (tiles.hpp).
#include "codegen/group/tiles.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "codegen/group/ast_parts.hpp"
#include "codegen/group/tuning.hpp"
#include "codegen/rebuild.hpp"
#include "symbolic/bounds.hpp"

namespace polygrad::codegen {

namespace {

using namespace group_ast;  // NOLINT: the shared builders
namespace tune = group_tuning;

bool depends(LoopDeps& deps, const UOp* n, const UOp* r) {
  const std::vector<int64_t>& ids = deps.of(n);
  return std::binary_search(ids.begin(), ids.end(), r->arg_int());
}

}  // namespace

std::optional<Product> product_shape(const UOpRef& sink) {
  Product p;
  const Kernel kernel = survey(sink);
  p.next_id = kernel.next_id;
  if (kernel.reduces.size() != 1) return std::nullopt;
  for (const UOp* u : toposort(sink))
    if (u->op() == Op::LOAD && u->src(0)->src(0)->op() != Op::DEFINE_GLOBAL) return std::nullopt;
  const UOp* r = kernel.reduces[0];
  const DType t = r->dtype();
  if (static_cast<Op>(r->arg_int()) != Op::ADD || !t.is_float() || t.is_vector())
    return std::nullopt;
  UOpRef v = r->src(0);
  if (v->op() == Op::CAST && v->src(0)->op() == Op::MUL) v = v->src(0);  // a half product
  if (v->op() != Op::MUL) return std::nullopt;
  p.reduce = r;
  p.x = v->src(0);
  p.y = v->src(1);
  LoopDeps deps;
  for (size_t i = 1; i < r->nsrcs(); ++i) p.ks.push_back(r->src(i).get());
  for (const UOp* rng : kernel.outputs) {
    p.out_ends.push_back(rng->src(0));
    const bool in_x = depends(deps, p.x.get(), rng), in_y = depends(deps, p.y.get(), rng);
    if (in_x && in_y)
      p.bs.push_back(rng);
    else if (in_x)
      p.is.push_back(rng);
    else if (in_y)
      p.js.push_back(rng);
    else
      return std::nullopt;  // an output range only the epilogue reads
  }
  for (const UOpRef& st : sink->srcs())
    for (const UOp* rng : kernel.outputs)
      if (!depends(deps, st->src(0).get(), rng)) return std::nullopt;
  if (p.is.empty() || p.js.empty()) return std::nullopt;
  p.m = extent_of(p.is);
  p.n = extent_of(p.js);
  p.k = extent_of(p.ks);
  p.batch = extent_of(p.bs);
  return p;
}

Tiled::Tiled(UOpRef e, int64_t t)
    : extent(std::move(e)),
      tile(t),
      exact(extent->op() == Op::CONST && extent->arg_int() % t == 0) {}
bool Tiled::at_least(int64_t least) const {
  return extent->op() != Op::CONST || extent->arg_int() >= least;
}
UOpRef Tiled::count() const {
  return simplify((extent + (tile - 1)) / tile);
}
UOpRef Tiled::inside(const UOpRef& at) const {
  return exact ? UOpRef() : lt(at, extent);
}
UOpRef Tiled::clamp(const UOpRef& at) const {
  return exact ? at : where(lt(at, extent), at, simplify(extent - 1));
}

std::vector<UOpRef> stage_stores(const StagedTile& tile, const Product& p, const Tiled& k,
                                 const UOpRef& k0, const UOpRef& l, int64_t threads,
                                 const std::unordered_map<const UOp*, UOpRef>& batch_at) {
  std::vector<UOpRef> stores;
  for (int64_t c = 0; c * threads < tile.rows * tile.cols; ++c) {
    const UOpRef e = l + c * threads;
    const UOpRef row = e / tile.cols, col = e % tile.cols;
    const UOpRef kk = k0 * k.tile + (tile.k_rows ? row : col);
    const UOpRef pos = tile.start + (tile.k_rows ? col : row);
    const UOpRef inside = and_gate(tile.edge->inside(pos), k.inside(kk));
    std::unordered_map<const UOp*, UOpRef> at = batch_at;
    unflatten(*tile.own, tile.edge->clamp(pos), at);
    unflatten(p.ks, k.clamp(kk), at);
    UOpRef value = substituted(tile.value, at);
    if (inside) value = where(inside, value, const_float(tile.value->dtype(), 0.0));
    const UOpRef at_local = tile.stride > 0 ? row * tile.stride + col : e;
    stores.push_back(
        UOp::make(Op::STORE, dtypes::void_,
                  {UOp::make(Op::INDEX, tile.local->dtype(), {tile.local, at_local}), value}));
  }
  return stores;
}

std::optional<TileLaunch> tile_launch(const Product& p, const Tiled& m, const Tiled& n,
                                      int64_t threads, const Target& target) {
  const UOpRef tiles_m = m.count(), tiles_n = n.count();
  const UOpRef count = simplify(p.batch * tiles_m * tiles_n);
  const std::optional<Bounds> most = bounds(count);
  if (!most || most->hi > int64_t{target.caps.max_global_dims[0]}) return std::nullopt;
  TileLaunch t;
  t.plan.grouped = true;
  t.plan.out_ends = p.out_ends;
  t.plan.groups = {count, idx(1), idx(1)};
  t.plan.local = {static_cast<uint32_t>(threads), 1, 1};
  const UOpRef g = special("gidx0", count);
  t.l = special("lidx0", idx(threads));
  t.tn = g % tiles_n;
  t.tm = (g / tiles_n) % tiles_m;
  unflatten(p.bs, g / (tiles_n * tiles_m), t.batch_at);
  return t;
}

void store_output(const UOpRef& sink, const Product& p, const Tiled& m, const Tiled& n,
                  const UOpRef& mi, const UOpRef& ni, const UOpRef& value,
                  const std::unordered_map<const UOp*, UOpRef>& batch_at,
                  std::vector<UOpRef>& stores) {
  const UOpRef inside = and_gate(m.inside(mi), n.inside(ni));
  std::unordered_map<const UOp*, UOpRef> at = batch_at;
  unflatten(p.is, m.clamp(mi), at);
  unflatten(p.js, n.clamp(ni), at);
  at[p.reduce] = value;
  for (const UOpRef& st : sink->srcs()) stores.push_back(gate_store(substituted(st, at), inside));
}

namespace {

/// The tile plan of `shape` with tile shape `ts`, or nullopt when the product is smaller than
/// the tile or the target lacks the threads or local memory it needs.
std::optional<Planned> plan_tiles_of(const UOpRef& sink, const Target& target, const Product& shape,
                                     const tune::TileShape& ts) {
  const UOp* r = shape.reduce;
  const DType t = r->dtype();
  const UOpRef x = shape.x, y = shape.y;
  const DType tx_t = x->dtype(), ty_t = y->dtype();  // the operands' own (a half product's)
  const Ranges &is = shape.is, &js = shape.js;
  const Tiled m(shape.m, ts.m), n(shape.n, ts.n), k(shape.k, ts.k);
  int64_t next_id = shape.next_id;
  if (!m.at_least(ts.m) || !n.at_least(ts.n) || !k.at_least(ts.k)) return std::nullopt;
  const int64_t threads = ts.threads();
  const int64_t tile_bytes = (ts.m * tx_t.scalar_size() + ts.n * ty_t.scalar_size()) * ts.k;
  if (threads > int64_t{max_local(target)} ||
      tile_bytes > static_cast<int64_t>(target.caps.local_memory_bytes) ||
      !(target.caps.flags & PG_CAP_LOCAL_MEMORY))
    return std::nullopt;
  std::optional<TileLaunch> launch = tile_launch(shape, m, n, threads, target);
  if (!launch) return std::nullopt;
  Planned& plan = launch->plan;
  const UOpRef &l = launch->l, &tm = launch->tm, &tn = launch->tn;
  const std::unordered_map<const UOp*, UOpRef>& batch_at = launch->batch_at;
  // Thread l = ty * (n / reg_n) + tx.
  const int64_t across = ts.n / ts.reg_n;
  const UOpRef tx = l % across, ty = l / across;

  // The stage: per slice k0 of ts.k, X's tile [mm][kk] and Y's tile [kk][nn] in local memory.
  const UOpRef k0 = range(k.count(), next_id++);
  const UOpRef k1 = range(idx(ts.k), next_id++);
  const DType lx = tx_t.ptr(AddrSpace::local), ly = ty_t.ptr(AddrSpace::local);
  const UOpRef xs = UOp::make(Op::DEFINE_LOCAL, lx, {}, Arg(std::vector<int64_t>{0, ts.m * ts.k}));
  const UOpRef ys = UOp::make(Op::DEFINE_LOCAL, ly, {}, Arg(std::vector<int64_t>{1, ts.k * ts.n}));
  Stage stage;
  stage.loop_id = k0->arg_int();
  // X's tile [mm][kk] (m = tm * TM + mm), Y's [kk][nn] (n = tn * TN + nn).
  for (const StagedTile& tile : {StagedTile{xs, x, &is, &m, tm * ts.m, false, ts.m, ts.k},
                                 StagedTile{ys, y, &js, &n, tn * ts.n, true, ts.k, ts.n}})
    for (UOpRef& st : stage_stores(tile, shape, k, k0, l, threads, batch_at))
      stage.stores.push_back(std::move(st));
  plan.stages.push_back(std::move(stage));

  // The thread's reg_m x reg_n outputs: one REDUCE each over (k0, k1), read from the tiles.
  // Thread (ty, tx) holds rows ty + down * ri and columns tx + across * rj, not a contiguous
  // block: the 32 threads of a warp then read consecutive words of Y's tile and at most two
  // rows of X's (no two in one bank of local memory; a contiguous 4 x 4 block put 2 reads in
  // each bank), and store consecutive columns of the output.
  const int64_t down = ts.m / ts.reg_m;
  std::vector<UOpRef> stores;
  for (int64_t ri = 0; ri < ts.reg_m; ++ri)
    for (int64_t rj = 0; rj < ts.reg_n; ++rj) {
      const UOpRef mm = ty + down * ri, nn = tx + across * rj;
      const UOpRef mi = tm * ts.m + mm, ni = tn * ts.n + nn;
      const UOpRef a = UOp::make(Op::LOAD, tx_t, {UOp::make(Op::INDEX, lx, {xs, mm * ts.k + k1})});
      const UOpRef bv = UOp::make(Op::LOAD, ty_t, {UOp::make(Op::INDEX, ly, {ys, k1 * ts.n + nn})});
      // The kernel's own product (a half one cast to float stays so) of the staged values.
      const UOpRef prod = substituted(r->src(0), {{x.get(), a}, {y.get(), bv}});
      const UOpRef sum = UOp::make(Op::REDUCE, t, {prod, k0, k1}, r->arg());
      store_output(sink, shape, m, n, mi, ni, sum, batch_at, stores);
    }
  plan.sink = UOp::make(Op::SINK, dtypes::void_, stores);
  return std::move(plan);
}

}  // namespace

std::optional<Planned> plan_tiles(const UOpRef& sink, const Target& target) {
  return plan_tiles(sink, target, tune::tile_shapes());
}

std::optional<Planned> plan_tiles(const UOpRef& sink, const Target& target,
                                  const std::vector<tune::TileShape>& shapes) {
  std::optional<Product> shape = product_shape(sink);
  if (!shape) return std::nullopt;
  for (const tune::TileShape& ts : shapes)
    if (std::optional<Planned> plan = plan_tiles_of(sink, target, *shape, ts)) return plan;
  return std::nullopt;
}

}  // namespace polygrad::codegen
