/* Reductions and movement. Dims arrive as R gives them (1-based, negative from the end) and are
 * turned into the C API's 0-based axes here. */
#include "glue.h"

#include <string.h>

typedef pg_api_status (*reduce_fn)(pg_tensor_t, const int64_t*, size_t, int, pg_tensor_t*);
typedef pg_api_status (*axis_fn)(pg_tensor_t, int64_t, pg_tensor_t*);
typedef pg_api_status (*list_fn)(pg_tensor_t, const int64_t*, size_t, pg_tensor_t*);

static const char* name_arg(SEXP name) {
  return pgr_string(name, "op name");
}

/* .Call(C_pgr_reduce, x, name, dims, keepdim): sum, max, min, prod, mean, any, all over dims
 * (NULL: every axis). */
SEXP pgr_reduce(SEXP x, SEXP name, SEXP dims, SEXP keepdim) {
  const char* n = name_arg(name);
  reduce_fn f = NULL;
#define X(op) \
  if (strcmp(n, #op) == 0) f = pg.pg_tensor_##op;
  PG_TENSOR_REDUCE_OPS(X)
#undef X
  if (!f) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "no reduction '%s'", n);
  size_t na = 0;
  int64_t* axes = pgr_axes(dims, &na, n);
  PGR_RETURN(f(pgr_handle(x, "x"), axes, na, pgr_flag(keepdim, "keepdim"), &out_));
}

/* .Call(C_pgr_var_std, x, name, dims, keepdim, correction) */
SEXP pgr_var_std(SEXP x, SEXP name, SEXP dims, SEXP keepdim, SEXP correction) {
  size_t na = 0;
  const char* n = name_arg(name);
  int64_t* axes = pgr_axes(dims, &na, n);
  int k = pgr_flag(keepdim, "keepdim");
  double c = pgr_double(correction, "correction");
  if (strcmp(n, "var") == 0)
    PGR_RETURN(pg.pg_tensor_var(pgr_handle(x, "x"), axes, na, k, c, &out_));
  PGR_RETURN(pg.pg_tensor_std(pgr_handle(x, "x"), axes, na, k, c, &out_));
}

/* .Call(C_pgr_argext, x, name, dim, keepdim): argmax / argmin as 1-based int32 indices. */
SEXP pgr_argext(SEXP x, SEXP name, SEXP dim, SEXP keepdim) {
  int64_t axis = 0;
  const char* n = name_arg(name);
  if (!Rf_isNull(dim)) axis = pgr_axis(dim, n);
  int k = pgr_flag(keepdim, "keepdim");
  pg_tensor_t h = pgr_handle(x, "x"), idx = NULL, out = NULL;
  if (strcmp(n, "argmax") == 0)
    PGR_CHECK(pg.pg_tensor_argmax(h, Rf_isNull(dim) ? NULL : &axis, k, &idx));
  else
    PGR_CHECK(pg.pg_tensor_argmin(h, Rf_isNull(dim) ? NULL : &axis, k, &idx));
  pg_api_status st = pg.pg_tensor_add_scalar(idx, pg_scalar_int(1), &out);
  pg.pg_tensor_free(idx);
  PGR_CHECK(st);
  return pgr_wrap(out);
}

SEXP pgr_logsumexp(SEXP x, SEXP dim, SEXP keepdim) {
  PGR_RETURN(pg.pg_tensor_logsumexp(pgr_handle(x, "x"), pgr_axis(dim, "logsumexp"),
                                    pgr_flag(keepdim, "keepdim"), &out_));
}

/* .Call(C_pgr_axis_op, x, name, dim): softmax, log_softmax, cumsum, unsqueeze. */
SEXP pgr_axis_op(SEXP x, SEXP name, SEXP dim) {
  const char* n = name_arg(name);
  axis_fn f = NULL;
#define X(op) \
  if (strcmp(n, #op) == 0) f = pg.pg_tensor_##op;
  PG_TENSOR_AXIS_OPS(X)
#undef X
  if (!f) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "no op '%s' along a dim", n);
  PGR_RETURN(f(pgr_handle(x, "x"), pgr_axis(dim, n), &out_));
}

/* .Call(C_pgr_list_op, x, name, values): reshape, view, expand, repeat take sizes; permute and
 * flip take dims. */
SEXP pgr_list_op(SEXP x, SEXP name, SEXP values) {
  const char* n = name_arg(name);
  list_fn f = NULL;
#define X(op) \
  if (strcmp(n, #op) == 0) f = pg.pg_tensor_##op;
  PG_TENSOR_LIST_OPS(X)
#undef X
  if (!f) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "no op '%s' with a list", n);
  size_t nv = 0;
  int dims = strcmp(n, "permute") == 0 || strcmp(n, "flip") == 0;
  int64_t* v = dims ? pgr_axes(values, &nv, n) : pgr_int64s(values, &nv, n);
  PGR_RETURN(f(pgr_handle(x, "x"), v, nv, &out_));
}

SEXP pgr_transpose(SEXP x, SEXP dim0, SEXP dim1) {
  PGR_RETURN(pg.pg_tensor_transpose(pgr_handle(x, "x"), pgr_axis(dim0, "transpose"),
                                    pgr_axis(dim1, "transpose"), &out_));
}

SEXP pgr_squeeze(SEXP x, SEXP dim) {
  int64_t axis = 0;
  if (!Rf_isNull(dim)) axis = pgr_axis(dim, "squeeze");
  PGR_RETURN(pg.pg_tensor_squeeze(pgr_handle(x, "x"), Rf_isNull(dim) ? NULL : &axis, &out_));
}

SEXP pgr_flatten(SEXP x, SEXP start, SEXP end) {
  PGR_RETURN(pg.pg_tensor_flatten(pgr_handle(x, "x"), pgr_axis(start, "flatten"),
                                  pgr_axis(end, "flatten"), &out_));
}

SEXP pgr_unflatten(SEXP x, SEXP dim, SEXP sizes) {
  size_t n = 0;
  int64_t* s = pgr_int64s(sizes, &n, "unflatten");
  PGR_RETURN(pg.pg_tensor_unflatten(pgr_handle(x, "x"), pgr_axis(dim, "unflatten"), s, n, &out_));
}

/* .Call(C_pgr_shrink, x, bounds): bounds are 0-based (begin, end) pairs, one per axis. */
SEXP pgr_shrink(SEXP x, SEXP bounds) {
  size_t n = 0;
  int64_t* b = pgr_int64s(bounds, &n, "shrink");
  PGR_RETURN(pg.pg_tensor_shrink(pgr_handle(x, "x"), b, n / 2, &out_));
}

/* .Call(C_pgr_pad, x, pads, mode, value): (before, after) pairs per axis; mode 0..3 as
 * pg_pad_mode. */
SEXP pgr_pad(SEXP x, SEXP pads, SEXP mode, SEXP value) {
  size_t n = 0;
  int64_t* p = pgr_int64s(pads, &n, "pad");
  PGR_RETURN(pg.pg_tensor_pad_mode(pgr_handle(x, "x"), p, n / 2, (int)pgr_int64(mode, "mode"),
                                   pgr_double(value, "value"), &out_));
}

/* .Call(C_pgr_getitem, x, kinds, values): one pg_index per entry; values holds value, has_start,
 * start, has_stop, stop, step for each (6 numbers). */
SEXP pgr_getitem(SEXP x, SEXP kinds, SEXP values) {
  size_t nk = 0, nv = 0;
  int64_t* k = pgr_int64s(kinds, &nk, "index kinds");
  int64_t* v = pgr_int64s(values, &nv, "index values");
  if (nv != 6 * nk) pgr_error(PG_API_ERR_INTERNAL, "getitem: %zu values for %zu entries", nv, nk);
  pg_index* idx = (pg_index*)R_alloc(nk ? nk : 1, sizeof(pg_index));
  for (size_t i = 0; i < nk; ++i) {
    idx[i].kind = (pg_index_kind)k[i];
    idx[i].value = v[6 * i];
    idx[i].has_start = (int)v[6 * i + 1];
    idx[i].start = v[6 * i + 2];
    idx[i].has_stop = (int)v[6 * i + 3];
    idx[i].stop = v[6 * i + 4];
    idx[i].step = v[6 * i + 5];
  }
  PGR_RETURN(pg.pg_tensor_getitem(pgr_handle(x, "x"), idx, nk, &out_));
}

/* Subtracts 1 from an R index tensor (1-based) for the core (0-based); the caller frees it. */
static pg_tensor_t zero_based(SEXP index, const char* what) {
  pg_tensor_t out = NULL;
  PGR_CHECK(pg.pg_tensor_sub_scalar(pgr_handle(index, what), pg_scalar_int(1), &out));
  return out;
}

/* .Call(C_pgr_gather, x, dim, index): index holds 1-based positions along dim. */
SEXP pgr_gather(SEXP x, SEXP dim, SEXP index) {
  pg_tensor_t h = pgr_handle(x, "x");
  int64_t axis = pgr_axis(dim, "gather"), size = 0;
  PGR_CHECK(pg.pg_tensor_size(h, axis, &size));
  pgr_check_positions(pgr_handle(index, "index"), size, INT64_MIN, "gather");
  pg_tensor_t i0 = zero_based(index, "index"), out = NULL;
  pg_api_status st = pg.pg_tensor_gather(h, axis, i0, &out);
  pg.pg_tensor_free(i0);
  PGR_CHECK(st);
  return pgr_wrap(out);
}

/* .Call(C_pgr_one_hot, x, num_classes): x holds 1-based classes; -1 counts them. */
SEXP pgr_one_hot(SEXP x, SEXP num_classes) {
  int64_t n = pgr_int64(num_classes, "num_classes");
  if (n >= 0) pgr_check_positions(pgr_handle(x, "x"), n, INT64_MIN, "one_hot");
  pg_tensor_t i0 = zero_based(x, "x"), out = NULL;
  pg_api_status st = pg.pg_tensor_one_hot(i0, n, &out);
  pg.pg_tensor_free(i0);
  PGR_CHECK(st);
  return pgr_wrap(out);
}

SEXP pgr_cat(SEXP list, SEXP dim) {
  size_t n = 0;
  pg_tensor_t* hs = pgr_handles(list, &n, "tensors");
  PGR_RETURN(pg.pg_tensor_cat(hs, n, pgr_axis(dim, "cat"), &out_));
}

SEXP pgr_stack(SEXP list, SEXP dim) {
  size_t n = 0;
  pg_tensor_t* hs = pgr_handles(list, &n, "tensors");
  PGR_RETURN(pg.pg_tensor_stack(hs, n, pgr_axis(dim, "stack"), &out_));
}

static SEXP pieces(pg_tensor_t* out, size_t count) {
  SEXP list = PROTECT(Rf_allocVector(VECSXP, (R_xlen_t)count));
  for (size_t i = 0; i < count; ++i) SET_VECTOR_ELT(list, (R_xlen_t)i, pgr_wrap(out[i]));
  UNPROTECT(1);
  return list;
}

/* .Call(C_pgr_split, x, sizes, dim): pieces of the given sizes. */
SEXP pgr_split(SEXP x, SEXP sizes, SEXP dim) {
  size_t n = 0, count = 0;
  int64_t* s = pgr_int64s(sizes, &n, "split");
  pg_tensor_t* out = (pg_tensor_t*)R_alloc(n ? n : 1, sizeof(pg_tensor_t));
  PGR_CHECK(
      pg.pg_tensor_split_sizes(pgr_handle(x, "x"), s, n, pgr_axis(dim, "split"), out, n, &count));
  return pieces(out, count);
}

SEXP pgr_chunk(SEXP x, SEXP chunks, SEXP dim) {
  int64_t k = pgr_int64(chunks, "chunks");
  if (k < 1 || k > 1 << 20)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "chunk: chunks must be in 1 .. 2^20, not %lld",
              (long long)k);
  size_t count = 0;
  pg_tensor_t* out = (pg_tensor_t*)R_alloc((size_t)k, sizeof(pg_tensor_t));
  PGR_CHECK(
      pg.pg_tensor_chunk(pgr_handle(x, "x"), k, pgr_axis(dim, "chunk"), out, (size_t)k, &count));
  return pieces(out, count);
}

SEXP pgr_roll(SEXP x, SEXP shifts, SEXP dims) {
  size_t ns = 0, nd = 0;
  int64_t* s = pgr_int64s(shifts, &ns, "shifts");
  int64_t* d = pgr_axes(dims, &nd, "roll");
  PGR_RETURN(pg.pg_tensor_roll(pgr_handle(x, "x"), s, ns, d, nd, &out_));
}
