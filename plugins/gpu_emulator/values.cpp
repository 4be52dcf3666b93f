// Handlers that make or move values without arithmetic: constants, parameters, launch
// indices, pointer offsets, lane extraction and assembly, selection.
#include <cstring>

#include "batch.hpp"
#include "handlers.hpp"

namespace polygrad::gpu_emu {

namespace {

void run_const(const Instr& in, Batch& b) {
  Slot v;
  v.i = in.imm;
  const Active& active = b.active(in);
  for (uint32_t l = 0; l < in.lanes; ++l) {
    Slot* d = b.row(in.dst + l);
    for_each_thread(active, [&](uint32_t t) { d[t] = v; });
  }
}

template <pg_dtype DT>
void run_scalar(const Instr& in, Batch& b) {
  Slot raw;
  raw.i = b.scalars[in.imm];  // floats: the bits of a double
  const Slot v = Type<DT>::fix(raw);
  Slot* d = b.row(in.dst);
  for_each_thread(b.active(in), [&](uint32_t t) { d[t] = v; });
}

void run_special(const Instr& in, Batch& b) {
  const uint32_t dim = static_cast<uint32_t>(in.imm & 0xff);
  const auto kind = static_cast<pg_special_kind>(in.imm >> 8);
  const uint16_t* local = b.local_id[dim];
  const uint32_t* group = b.group_id[dim];
  const uint16_t* group_of = b.group_of;
  const uint32_t size = b.local_size[dim];
  Slot* __restrict d = b.row(in.dst);
  // An int32, as on a GPU: group * size + local wraps past 2^31.
  if (kind == PG_SPECIAL_LOCAL)
    for_each_thread(b.active(in), [&](uint32_t t) { d[t].i = local[t]; });
  else if (kind == PG_SPECIAL_GROUP)
    for_each_thread(b.active(in), [&](uint32_t t) { d[t].i = group[group_of[t]]; });
  else
    for_each_thread(b.active(in), [&](uint32_t t) {
      d[t].i = static_cast<int32_t>(group[group_of[t]] * size + local[t]);
    });
}

void run_index(const Instr& in, Batch& b) {
  Slot* __restrict d = b.row(in.dst);
  const Slot* p = b.row(in.src[0]);
  const Slot* off = b.row(in.src[1]);
  for_each_thread(b.active(in), [&](uint32_t t) { d[t].i = p[t].i + off[t].i; });
}

void run_gep(const Instr& in, Batch& b) {
  Slot* __restrict d = b.row(in.dst);
  const Slot* x = b.row(in.src[0] + static_cast<uint32_t>(in.imm));
  for_each_thread(b.active(in), [&](uint32_t t) { d[t] = x[t]; });
}

void run_vectorize(const Instr& in, Batch& b) {
  const Active& active = b.active(in);
  for (uint32_t l = 0; l < in.lanes; ++l) {
    Slot* __restrict d = b.row(in.dst + l);
    const Slot* x = b.row(b.program->lists[in.array + l]);
    for_each_thread(active, [&](uint32_t t) { d[t] = x[t]; });
  }
}

void run_where(const Instr& in, Batch& b) {
  const Active& active = b.active(in);
  for (uint32_t l = 0; l < in.lanes; ++l) {
    Slot* __restrict d = b.row(in.dst + l);
    const Slot* c = b.row(in.src[0] + l * in.step[0]);
    const Slot* x = b.row(in.src[1] + l * in.step[1]);
    const Slot* y = b.row(in.src[2] + l * in.step[2]);
    for_each_thread(active, [&](uint32_t t) { d[t] = c[t].i != 0 ? x[t] : y[t]; });
  }
}

}  // namespace

Handler const_handler() {
  return &run_const;
}
Handler scalar_handler(pg_dtype dtype) {
  return with_dtype(dtype, [&]<pg_dtype DT>() -> Handler { return &run_scalar<DT>; });
}
Handler special_handler() {
  return &run_special;
}
Handler index_handler() {
  return &run_index;
}
Handler gep_handler() {
  return &run_gep;
}
Handler vectorize_handler() {
  return &run_vectorize;
}
Handler where_handler() {
  return &run_where;
}

}  // namespace polygrad::gpu_emu
