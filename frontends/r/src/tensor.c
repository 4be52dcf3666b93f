/* Tensors as R objects: an external pointer to a pg_tensor_t with class "polygrad_tensor" and
 * the tag symbol `polygrad_tensor` (what the glue checks: cheaper than the class, and only the
 * glue makes it), freed by a finalizer when R collects it. */
#include "glue.h"

static SEXP tensor_class = NULL;
static SEXP tensor_tag = NULL;

static SEXP tag(void) {
  if (!tensor_tag) tensor_tag = Rf_install("polygrad_tensor"); /* (symbols are never freed) */
  return tensor_tag;
}
static int no_grad_depth = 0;
static double live_handles = 0;

/* R's collector sees an external pointer's few bytes, not the tensor memory behind it: while
 * the R heap stays small it may not run for a long time, and tensors nobody references pile
 * up. So the glue counts the bytes of the live handles (numel * element size, plus an
 * estimate of the graph node each holds) and runs a collection, which frees the unreferenced
 * ones through their finalizers, when they reach gc_at; gc_at becomes twice the survivors' or
 * the threshold (pg_gc_threshold()), whichever is larger. torch for R does the same
 * (torch.threshold_call_gc). */
#define PGR_HANDLE_OVERHEAD 512.0
static double live_bytes = 0;
static double gc_threshold = 256.0 * 1024 * 1024;
static double gc_at = 256.0 * 1024 * 1024;

static double handle_bytes(pg_tensor_t h) {
  int64_t n = 0, size = 0;
  if (pg.pg_tensor_numel(h, &n) != PG_API_OK || pg.pg_tensor_element_size(h, &size) != PG_API_OK)
    return PGR_HANDLE_OVERHEAD;
  return (double)n * (double)size + PGR_HANDLE_OVERHEAD;
}

/* Finalised tensors, kept to be the R object of later ones. R keeps an object whose finalizer
 * is pending through the collection that finds it unreachable, so each tensor's external
 * pointer and class attribute reach R's old generation, where they stay, dead, until a
 * collection of that generation: R then allocates among ever more dead objects, and a loop of
 * small ops ran about twice as slow in its steady state as in its first rounds
 * (bench/README.md). Reusing the finalised objects instead keeps them out of the garbage; only
 * the finalizer's own record (R's weak reference) is still made per tensor. Only an object
 * nothing refers to is reused: R does not lower the count when a referrer dies, so a tensor
 * that was ever bound (a variable of a function that kept its environment, x$method's
 * binding) is left to the collector, as before. */
#define PGR_POOL_SIZE 16384
static SEXP pool = NULL; /* a preserved list; its first pool_n entries are finalised tensors */
static R_xlen_t pool_n = 0;

/* Whether the finalised tensor p can be reused: nothing refers to it (R counts references; a
 * finalizer of the user's that kept p would), and its only attribute is the package's class
 * (the user may have set others). */
static int reusable(SEXP p) {
  SEXP a = ATTRIB(p);
  return NO_REFERENCES(p) && a != R_NilValue && CDR(a) == R_NilValue && TAG(a) == R_ClassSymbol &&
         CAR(a) == tensor_class && R_ExternalPtrProtected(p) == R_NilValue;
}

static void finalize(SEXP p) {
  pg_tensor_t h = (pg_tensor_t)R_ExternalPtrAddr(p);
  if (h) {
    live_bytes -= handle_bytes(h);
    pg.pg_tensor_free(h);
    R_ClearExternalPtr(p);
    live_handles -= 1;
  }
  if (pool && pool_n < PGR_POOL_SIZE && reusable(p)) SET_VECTOR_ELT(pool, pool_n++, p);
}

/* .Call(C_pgr_gc_threshold, mb): sets the threshold (NULL leaves it); returns the previous one
 * in MB. */
SEXP pgr_gc_threshold(SEXP mb) {
  double old = gc_threshold / (1024.0 * 1024.0);
  if (!Rf_isNull(mb)) {
    double v = pgr_double(mb, "threshold_mb");
    if (!(v >= 0)) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "threshold_mb must be 0 or more");
    gc_threshold = v * 1024.0 * 1024.0;
    gc_at = live_bytes + gc_threshold;
  }
  return Rf_ScalarReal(old);
}

SEXP pgr_wrap(pg_tensor_t h) {
  if (no_grad_depth > 0) {
    pg_tensor_t d = NULL;
    pg_api_status st = pg.pg_tensor_detach(h, &d);
    pg.pg_tensor_free(h);
    if (st != PG_API_OK) pgr_throw_status(st);
    h = d;
  }
  double bytes = handle_bytes(h);
  if (live_bytes + bytes >= gc_at) {
    R_gc();
    gc_at = 2 * live_bytes > gc_threshold ? 2 * live_bytes : gc_threshold;
  }
  if (!tensor_class) {
    tensor_class = Rf_mkString("polygrad_tensor");
    R_PreserveObject(tensor_class);
    MARK_NOT_MUTABLE(tensor_class);
    pool = Rf_allocVector(VECSXP, PGR_POOL_SIZE);
    R_PreserveObject(pool);
  }
  SEXP p;
  if (pool_n > 0) {
    p = PROTECT(VECTOR_ELT(pool, --pool_n));
    SET_VECTOR_ELT(pool, pool_n, R_NilValue);
    R_SetExternalPtrAddr(p, h);
  } else {
    p = PROTECT(R_MakeExternalPtr(h, tag(), R_NilValue));
    Rf_setAttrib(p, R_ClassSymbol, tensor_class);
  }
  live_handles += 1;
  live_bytes += bytes;
  R_RegisterCFinalizerEx(p, finalize, FALSE);
  UNPROTECT(1);
  return p;
}

int pgr_is_tensor(SEXP x) {
  return TYPEOF(x) == EXTPTRSXP && R_ExternalPtrTag(x) == tag();
}

pg_tensor_t pgr_handle(SEXP x, const char* what) {
  if (!pgr_is_tensor(x))
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must be a polygrad_tensor, not %s", what,
              Rf_type2char(TYPEOF(x)));
  pg_tensor_t h = (pg_tensor_t)R_ExternalPtrAddr(x);
  if (!h)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT,
              "%s is a tensor of an earlier R session (saved and restored): it holds no data",
              what);
  return h;
}

pg_tensor_t pgr_opt_handle(SEXP x, const char* what) {
  return Rf_isNull(x) ? NULL : pgr_handle(x, what);
}

/* .Call(C_pgr_no_grad, delta): adds delta to the with_no_grad() depth; returns the new depth. */
SEXP pgr_no_grad(SEXP delta) {
  no_grad_depth += (int)pgr_int64(delta, "delta");
  if (no_grad_depth < 0) no_grad_depth = 0;
  return Rf_ScalarInteger(no_grad_depth);
}

/* .Call(C_pgr_live_handles): tensor handles the package holds (made minus finalised). */
SEXP pgr_live_handles(void) {
  return Rf_ScalarReal(live_handles);
}

/* ---- properties ----------------------------------------------------------------------- */

SEXP pgr_shape(SEXP x) {
  pg_tensor_t h = pgr_handle(x, "x");
  int64_t small[16];
  size_t nd = 0;
  PGR_CHECK(pg.pg_tensor_shape(h, small, 16, &nd));
  int64_t* dims = small;
  if (nd > 16) {
    dims = (int64_t*)R_alloc(nd, sizeof(int64_t));
    PGR_CHECK(pg.pg_tensor_shape(h, dims, nd, &nd));
  }
  int fits = 1;
  for (size_t i = 0; i < nd; ++i) fits &= dims[i] <= 2147483647;
  SEXP out = PROTECT(Rf_allocVector(fits ? INTSXP : REALSXP, (R_xlen_t)nd));
  for (size_t i = 0; i < nd; ++i) {
    if (fits)
      INTEGER(out)[i] = (int)dims[i];
    else
      REAL(out)[i] = (double)dims[i];
  }
  UNPROTECT(1);
  return out;
}

SEXP pgr_dtype(SEXP x) {
  return Rf_mkString(pgr_dtype_name(pgr_tensor_dtype(pgr_handle(x, "x"))));
}

SEXP pgr_device(SEXP x) {
  return Rf_mkString(pgr_tensor_device(pgr_handle(x, "x")));
}

SEXP pgr_numel(SEXP x) {
  int64_t n = 0;
  PGR_CHECK(pg.pg_tensor_numel(pgr_handle(x, "x"), &n));
  return Rf_ScalarReal((double)n);
}

SEXP pgr_element_size(SEXP x) {
  int64_t n = 0;
  PGR_CHECK(pg.pg_tensor_element_size(pgr_handle(x, "x"), &n));
  return Rf_ScalarInteger((int)n);
}

SEXP pgr_is_realized(SEXP x) {
  int r = 0;
  PGR_CHECK(pg.pg_tensor_is_realized(pgr_handle(x, "x"), &r));
  return Rf_ScalarLogical(r);
}

/* ---- realisation ---------------------------------------------------------------------- */

SEXP pgr_realize(SEXP x) {
  PGR_CHECK(pg.pg_tensor_realize(pgr_handle(x, "x")));
  return x;
}

SEXP pgr_realize_all(SEXP list) {
  size_t n = 0;
  pg_tensor_t* hs = pgr_handles(list, &n, "a tensor to realize");
  PGR_CHECK(pg.pg_tensor_realize_all(hs, n));
  return R_NilValue;
}

SEXP pgr_to(SEXP x, SEXP device) {
  PGR_RETURN(pg.pg_tensor_to(pgr_handle(x, "x"), pgr_device_arg(device), &out_));
}

SEXP pgr_cast(SEXP x, SEXP dtype) {
  PGR_RETURN(pg.pg_tensor_cast(pgr_handle(x, "x"), pgr_dtype_arg(dtype), &out_));
}

/* .Call(C_pgr_assign, x, value): value is a tensor or R data (cast to x's dtype). */
SEXP pgr_assign(SEXP x, SEXP value) {
  pg_tensor_t h = pgr_handle(x, "x");
  if (pgr_is_tensor(value)) {
    PGR_CHECK(pg.pg_tensor_assign(h, pgr_handle(value, "value")));
  } else {
    pg_tensor_t v = pgr_tensor_from_r(value, pgr_tensor_dtype(h), pgr_tensor_device(h));
    pg_api_status st = pg.pg_tensor_assign(h, v);
    pg.pg_tensor_free(v);
    PGR_CHECK(st);
  }
  return x;
}

/* ---- autograd ------------------------------------------------------------------------- */

SEXP pgr_requires_grad(SEXP x) {
  int on = 0;
  PGR_CHECK(pg.pg_tensor_requires_grad(pgr_handle(x, "x"), &on));
  return Rf_ScalarLogical(on);
}

SEXP pgr_set_requires_grad(SEXP x, SEXP on) {
  PGR_CHECK(pg.pg_tensor_set_requires_grad(pgr_handle(x, "x"), pgr_flag(on, "requires_grad")));
  return x;
}

SEXP pgr_grad(SEXP x) {
  pg_tensor_t g = NULL;
  PGR_CHECK(pg.pg_tensor_grad(pgr_handle(x, "x"), &g));
  return g ? pgr_wrap(g) : R_NilValue;
}

SEXP pgr_set_grad(SEXP x, SEXP g) {
  PGR_CHECK(pg.pg_tensor_set_grad(pgr_handle(x, "x"), pgr_opt_handle(g, "grad")));
  return x;
}

SEXP pgr_backward(SEXP x, SEXP g) {
  PGR_CHECK(pg.pg_tensor_backward(pgr_handle(x, "x"), pgr_opt_handle(g, "gradient")));
  return x;
}

/* .Call(C_pgr_gradient, root, targets, g): a list of d(root)/d(target). */
SEXP pgr_gradient(SEXP root, SEXP targets, SEXP g) {
  pg_tensor_t r = pgr_handle(root, "root");
  pg_tensor_t rg = pgr_opt_handle(g, "gradient");
  size_t n = 0;
  pg_tensor_t* ts = pgr_handles(targets, &n, "a target");
  pg_tensor_t* outs = (pg_tensor_t*)R_alloc(n ? n : 1, sizeof(pg_tensor_t));
  PGR_CHECK(pg.pg_tensor_gradient(r, ts, n, rg, outs));
  SEXP list = PROTECT(Rf_allocVector(VECSXP, (R_xlen_t)n));
  for (size_t i = 0; i < n; ++i) SET_VECTOR_ELT(list, (R_xlen_t)i, pgr_wrap(outs[i]));
  UNPROTECT(1);
  return list;
}

SEXP pgr_manual_seed(SEXP seed) {
  PGR_CHECK(pg.pg_manual_seed((uint64_t)pgr_int64(seed, "seed")));
  return R_NilValue;
}

SEXP pgr_kernel_count(void) {
  size_t n = 0;
  PGR_CHECK(pg.pg_compiled_kernel_count(&n));
  return Rf_ScalarReal((double)n);
}
