// plan_wmma(): the tensor-core form of the group strategy (wmma.hpp).
#include "codegen/group/wmma.hpp"

#include <algorithm>

#include "codegen/group/ast_parts.hpp"
#include "codegen/group/tiles.hpp"
#include "codegen/group/tuning.hpp"
#include "codegen/rebuild.hpp"

namespace polygrad::codegen {

namespace {

using namespace group_ast;  // NOLINT: the shared builders

/// A fragment's layout: for lane t and element l, the row and column it holds, as
/// base[l] + the sum over the set bits b of t of step[b].
struct Layout {
  std::vector<int64_t> row0, col0;          // per element l
  std::vector<int64_t> row_step, col_step;  // per bit of the lane
};

/// The layout of fragment `map` (null: canonical) of a rows x cols operand over `threads`
/// lanes, or nullopt when it is not a sum of per-bit amounts.
std::optional<Layout> layout_of(const uint16_t* map, int64_t rows, int64_t cols, int64_t threads) {
  const int64_t lanes = rows * cols / threads;
  if (lanes * threads != rows * cols || (threads & (threads - 1)) != 0) return std::nullopt;
  auto entry = [&](int64_t t, int64_t l) -> int64_t {
    return map != nullptr ? map[t * lanes + l] : t * lanes + l;
  };
  Layout out;
  int bits = 0;
  while ((int64_t{1} << bits) < threads) ++bits;
  for (int64_t l = 0; l < lanes; ++l) {
    out.row0.push_back(entry(0, l) / cols);
    out.col0.push_back(entry(0, l) % cols);
  }
  for (int b = 0; b < bits; ++b) {
    const int64_t e = entry(int64_t{1} << b, 0);
    out.row_step.push_back(e / cols - out.row0[0]);
    out.col_step.push_back(e % cols - out.col0[0]);
  }
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t row = out.row0[l], col = out.col0[l];
      for (int b = 0; b < bits; ++b)
        if ((t >> b) & 1) {
          row += out.row_step[b];
          col += out.col_step[b];
        }
      if (row * cols + col != entry(t, l) || row < 0 || row >= rows || col < 0 || col >= cols)
        return std::nullopt;
    }
  return out;
}

/// The row (or column) of element l for the lane `lane`, as an expression.
UOpRef position(const Layout& lay, bool row, int64_t l, const UOpRef& lane) {
  UOpRef v = idx(row ? lay.row0[l] : lay.col0[l]);
  const std::vector<int64_t>& step = row ? lay.row_step : lay.col_step;
  for (size_t b = 0; b < step.size(); ++b)
    if (step[b] != 0) v = v + (lane / (int64_t{1} << b)) % 2 * step[b];
  return v;
}

/// The half operand under a cast to float, or null.
UOpRef uncast(const UOpRef& v, uint8_t dtype) {
  if (v->op() == Op::CAST && v->src(0)->dtype().scalar() == dtype) return v->src(0);
  return UOpRef();
}

}  // namespace

namespace tune = group_tuning;

namespace {

/// Elements that pad each row of a staged tile, so that the rows of a fragment's lanes fall in
/// different banks of local memory (16 bytes of 16-bit values: rows stay 16-byte aligned).
constexpr int64_t kRowPad = 8;

/// The tensor-core plan of `shape` with operands `a`, `b` (in the shape's A and B dtypes) on
/// tensor core `ti` in the warp layout `ws`, or nullopt when it does not fit.
std::optional<Planned> plan_wmma_of(const UOpRef& sink, const Target& target, const Product& shape,
                                    const UOpRef& a, const UOpRef& b, uint32_t ti,
                                    const tune::WmmaShape& ws) {
  const pg_tensor_core& tc = target.caps.tensor_cores[ti];
  const UOp* r = shape.reduce;
  const DType acc = r->dtype();
  const int64_t threads = tc.threads;
  const int64_t tile_m = ws.warps_m * ws.frag_m * tc.m, tile_n = ws.warps_n * ws.frag_n * tc.n;
  const int64_t kc = ws.k_steps * tc.k;  // k staged at once
  const int64_t group_threads = ws.warps_m * ws.warps_n * threads;
  const int64_t la = tc.m * tc.k / threads, lb = tc.k * tc.n / threads, lc = tc.m * tc.n / threads;
  const std::optional<Layout> fa = layout_of(tc.a_map, tc.m, tc.k, threads);
  const std::optional<Layout> fb = layout_of(tc.b_map, tc.k, tc.n, threads);
  const std::optional<Layout> fc = layout_of(tc.c_map, tc.m, tc.n, threads);
  const DType ta = a->dtype(), tb = b->dtype();
  const int64_t sa = kc + kRowPad, sb = tile_n + kRowPad;  // the staged rows' strides
  const int64_t bytes = tile_m * sa * ta.scalar_size() + kc * sb * tb.scalar_size();
  if (!fa || !fb || !fc || std::max({la, lb, lc}) > int64_t{target.caps.max_vector_lanes} ||
      group_threads > int64_t{max_local(target)} ||
      bytes > static_cast<int64_t>(target.caps.local_memory_bytes))
    return std::nullopt;
  const Tiled m(shape.m, tile_m), n(shape.n, tile_n), k(shape.k, kc);
  if (!m.at_least(tile_m) || !n.at_least(tile_n) || !k.at_least(kc)) return std::nullopt;
  std::optional<TileLaunch> launch = tile_launch(shape, m, n, group_threads, target);
  if (!launch) return std::nullopt;
  Planned& plan = launch->plan;
  const UOpRef &l = launch->l, &tm = launch->tm, &tn = launch->tn;
  const std::unordered_map<const UOp*, UOpRef>& batch_at = launch->batch_at;
  int64_t next_id = shape.next_id;
  const UOpRef warp = l / threads, lane = l % threads;
  const UOpRef wy = warp / ws.warps_n, wx = warp % ws.warps_n;

  // Stage the slice k0 of both operands: A's [mm][kk], B's [kk][nn], rows padded, 0 outside.
  const UOpRef k0 = range(k.count(), next_id++);
  const UOpRef as = UOp::make(Op::DEFINE_LOCAL, ta.ptr(AddrSpace::local), {},
                              Arg(std::vector<int64_t>{0, tile_m * sa}));
  const UOpRef bs = UOp::make(Op::DEFINE_LOCAL, tb.ptr(AddrSpace::local), {},
                              Arg(std::vector<int64_t>{1, kc * sb}));
  Stage stage;
  stage.loop_id = k0->arg_int();
  for (const StagedTile& tile :
       {StagedTile{as, a, &shape.is, &m, tm * tile_m, false, tile_m, kc, sa},
        StagedTile{bs, b, &shape.js, &n, tn * tile_n, true, kc, tile_n, sb}})
    for (UOpRef& st : stage_stores(tile, shape, k, k0, l, group_threads, batch_at))
      stage.stores.push_back(std::move(st));
  plan.stages.push_back(std::move(stage));

  // Each warp's frag_m x frag_n tensor-core tiles per step k1 of the slice, fragments read from
  // the staged tiles.
  const UOpRef k1 = ws.k_steps > 1 ? range(idx(ws.k_steps), next_id++) : UOpRef();
  const UOpRef k_at = k1 ? k1 * tc.k : idx(0);
  auto fragment = [&](const UOpRef& tile, DType t, const Layout& lay, int64_t lanes,
                      const UOpRef& row0, const UOpRef& col0, int64_t stride) {
    std::vector<UOpRef> parts;
    for (int64_t e = 0; e < lanes; ++e) {
      const UOpRef at =
          (row0 + position(lay, true, e, lane)) * stride + col0 + position(lay, false, e, lane);
      parts.push_back(UOp::make(Op::LOAD, t, {UOp::make(Op::INDEX, tile->dtype(), {tile, at})}));
    }
    return UOp::make(Op::VECTORIZE, t.vec(static_cast<int>(lanes)), parts);
  };
  std::vector<UOpRef> stores;
  const DType cv = acc.vec(static_cast<int>(lc));
  for (int64_t fm = 0; fm < ws.frag_m; ++fm)
    for (int64_t fn = 0; fn < ws.frag_n; ++fn) {
      const UOpRef row0 = wy * (ws.frag_m * tc.m) + fm * tc.m;
      const UOpRef col0 = wx * (ws.frag_n * tc.n) + fn * tc.n;
      const UOpRef fa_v = fragment(as, ta, *fa, la, row0, k_at, sa);
      const UOpRef fb_v = fragment(bs, tb, *fb, lb, k_at, col0, sb);
      const UOpRef mma = UOp::make(Op::WMMA, cv, {fa_v, fb_v, const_float(cv, 0.0)},
                                   Arg(static_cast<int64_t>(ti)));
      const UOpRef sum = k1 ? UOp::make(Op::REDUCE, cv, {mma, k0, k1}, r->arg())
                            : UOp::make(Op::REDUCE, cv, {mma, k0}, r->arg());
      for (int64_t e = 0; e < lc; ++e) {
        const UOpRef mi = tm * tile_m + row0 + position(*fc, true, e, lane);
        const UOpRef ni = tn * tile_n + col0 + position(*fc, false, e, lane);
        store_output(sink, shape, m, n, mi, ni,
                     UOp::make(Op::GEP, acc, {sum}, Arg(std::vector<int64_t>{e})), batch_at,
                     stores);
      }
    }
  plan.sink = UOp::make(Op::SINK, dtypes::void_, stores);
  return std::move(plan);
}

}  // namespace

std::optional<Planned> plan_wmma(const UOpRef& sink, const Target& target) {
  return plan_wmma(sink, target, tune::wmma_shapes());
}

std::optional<Planned> plan_wmma(const UOpRef& sink, const Target& target,
                                 const std::vector<tune::WmmaShape>& shapes) {
  if (target.isa_version < 2 || !(target.caps.flags & PG_CAP_LOCAL_MEMORY)) return std::nullopt;
  std::optional<Product> shape = product_shape(sink);
  if (!shape) return std::nullopt;
  const UOp* r = shape->reduce;
  const DType acc = r->dtype();
  // The operands in their own dtype: a half product's, or the half values under casts.
  UOpRef x, y;
  if (r->src(0)->op() == Op::CAST) {
    x = shape->x;
    y = shape->y;
  }
  for (uint32_t ti = 0; ti < target.caps.tensor_core_count && ti < PG_MAX_TENSOR_CORES; ++ti) {
    const pg_tensor_core& tc = target.caps.tensor_cores[ti];
    if (tc.dtype_c != acc.scalar() || tc.threads == 0) continue;
    UOpRef a = x, b = y;
    if (!a) {
      a = uncast(shape->x, tc.dtype_a);
      b = uncast(shape->y, tc.dtype_b);
    }
    if (!a || !b || a->dtype().scalar() != tc.dtype_a || b->dtype().scalar() != tc.dtype_b)
      continue;
    for (const tune::WmmaShape& ws : shapes)
      if (std::optional<Planned> plan = plan_wmma_of(sink, target, *shape, a, b, ti, ws))
        return plan;
  }
  return std::nullopt;
}

}  // namespace polygrad::codegen
