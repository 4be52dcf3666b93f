/* Linear algebra and nn ops: linear, layernorm, losses, einsum, rearrange, convolution,
 * pooling, attention. */
#include "glue.h"

/* Two whole numbers ({h, w}) from a length-2 vector. */
static void pair(SEXP v, int64_t out[2], const char* what) {
  size_t n = 0;
  int64_t* p = pgr_int64s(v, &n, what);
  if (n != 2) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must be two whole numbers (h, w)", what);
  out[0] = p[0];
  out[1] = p[1];
}

SEXP pgr_linear(SEXP x, SEXP weight, SEXP bias) {
  PGR_RETURN(pg.pg_tensor_linear(pgr_handle(x, "x"), pgr_handle(weight, "weight"),
                                 pgr_opt_handle(bias, "bias"), &out_));
}

SEXP pgr_layernorm(SEXP x, SEXP dims, SEXP eps) {
  size_t n = 0;
  int64_t* axes = pgr_axes(dims, &n, "layernorm");
  PGR_RETURN(pg.pg_tensor_layernorm(pgr_handle(x, "x"), axes, n, pgr_double(eps, "eps"), &out_));
}

/* .Call(C_pgr_cross_entropy, x, target, dim, label_smoothing, ignore_index, reduction):
 * an int target holds 1-based classes (so does ignore_index); a float one probabilities. */
SEXP pgr_cross_entropy(SEXP x, SEXP target, SEXP dim, SEXP smoothing, SEXP ignore, SEXP reduction) {
  pg_tensor_t t = pgr_handle(target, "target"), t0 = NULL, out = NULL;
  int64_t ig = pgr_int64(ignore, "ignore_index");
  if (!pgr_dtype_is_float(pgr_tensor_dtype(t))) {
    int64_t classes = 0;
    pg_tensor_t h = pgr_handle(x, "input");
    PGR_CHECK(pg.pg_tensor_size(h, pgr_axis(dim, "cross_entropy"), &classes));
    pgr_check_positions(t, classes, ig, "cross_entropy");
    PGR_CHECK(pg.pg_tensor_sub_scalar(t, pg_scalar_int(1), &t0));
    t = t0;
    ig -= 1;
  }
  pg_api_status st = pg.pg_tensor_cross_entropy(
      pgr_handle(x, "input"), t, pgr_axis(dim, "cross_entropy"),
      pgr_double(smoothing, "label_smoothing"), ig, (int)pgr_int64(reduction, "reduction"), &out);
  if (t0) pg.pg_tensor_free(t0);
  PGR_CHECK(st);
  return pgr_wrap(out);
}

/* .Call(C_pgr_bce, x, target, reduction, logits, pos_weight) */
SEXP pgr_bce(SEXP x, SEXP target, SEXP reduction, SEXP logits, SEXP pos_weight) {
  int r = (int)pgr_int64(reduction, "reduction");
  if (pgr_flag(logits, "logits"))
    PGR_RETURN(pg.pg_tensor_binary_crossentropy_logits(
        pgr_handle(x, "input"), pgr_handle(target, "target"),
        pgr_opt_handle(pos_weight, "pos_weight"), r, &out_));
  PGR_RETURN(pg.pg_tensor_binary_crossentropy(pgr_handle(x, "input"), pgr_handle(target, "target"),
                                              r, &out_));
}

SEXP pgr_einsum(SEXP formula, SEXP list) {
  size_t n = 0;
  const char* f = pgr_string(formula, "einsum: the equation");
  pg_tensor_t* hs = pgr_handles(list, &n, "einsum: an operand");
  PGR_RETURN(pg.pg_tensor_einsum(f, hs, n, &out_));
}

/* .Call(C_pgr_rearrange, x, formula, sizes): sizes is a named numeric vector (or NULL). */
SEXP pgr_rearrange(SEXP x, SEXP formula, SEXP sizes) {
  size_t n = 0;
  int64_t* s = pgr_int64s(sizes, &n, "sizes");
  const char** names = (const char**)R_alloc(n ? n : 1, sizeof(char*));
  SEXP nm = Rf_getAttrib(sizes, R_NamesSymbol);
  if (n && Rf_isNull(nm)) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "rearrange: sizes must be named");
  for (size_t i = 0; i < n; ++i) names[i] = CHAR(STRING_ELT(nm, (R_xlen_t)i));
  PGR_RETURN(pg.pg_tensor_rearrange(pgr_handle(x, "x"),
                                    pgr_string(formula, "rearrange: the formula"), n ? names : NULL,
                                    n ? s : NULL, n, &out_));
}

SEXP pgr_conv2d(SEXP x, SEXP weight, SEXP bias, SEXP groups, SEXP stride, SEXP dilation,
                SEXP padding) {
  int64_t st[2], di[2], pa[2];
  pair(stride, st, "stride");
  pair(dilation, di, "dilation");
  pair(padding, pa, "padding");
  PGR_RETURN(pg.pg_tensor_conv2d(pgr_handle(x, "input"), pgr_handle(weight, "weight"),
                                 pgr_opt_handle(bias, "bias"), pgr_int64(groups, "groups"), st, di,
                                 pa, &out_));
}

SEXP pgr_max_pool2d(SEXP x, SEXP kernel, SEXP stride, SEXP dilation, SEXP padding, SEXP ceil_mode) {
  int64_t k[2], st[2], di[2], pa[2];
  pair(kernel, k, "kernel_size");
  if (!Rf_isNull(stride)) pair(stride, st, "stride");
  pair(dilation, di, "dilation");
  pair(padding, pa, "padding");
  PGR_RETURN(pg.pg_tensor_max_pool2d(pgr_handle(x, "input"), k, Rf_isNull(stride) ? NULL : st, di,
                                     pa, pgr_flag(ceil_mode, "ceil_mode"), &out_));
}

SEXP pgr_avg_pool2d(SEXP x, SEXP kernel, SEXP stride, SEXP padding, SEXP ceil_mode,
                    SEXP count_pad) {
  int64_t k[2], st[2], pa[2];
  pair(kernel, k, "kernel_size");
  if (!Rf_isNull(stride)) pair(stride, st, "stride");
  pair(padding, pa, "padding");
  PGR_RETURN(pg.pg_tensor_avg_pool2d(pgr_handle(x, "input"), k, Rf_isNull(stride) ? NULL : st, pa,
                                     pgr_flag(ceil_mode, "ceil_mode"),
                                     pgr_flag(count_pad, "count_include_pad"), &out_));
}

SEXP pgr_sdpa(SEXP q, SEXP k, SEXP v, SEXP mask, SEXP causal) {
  PGR_RETURN(pg.pg_tensor_scaled_dot_product_attention(
      pgr_handle(q, "query"), pgr_handle(k, "key"), pgr_handle(v, "value"),
      pgr_opt_handle(mask, "attn_mask"), pgr_flag(causal, "is_causal"), &out_));
}
