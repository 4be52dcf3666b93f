/* x$name: a tensor's properties, computed here, and its methods (.tensor_methods in
 * R/methods.R) bound to x. A bound method is the method's own closure less its first formal
 * (`self`), in an environment that holds self = x: x$f(...) is then one call of the method's
 * compiled body, where binding with function(...) m(x, ...) in R took two calls and a
 * forwarding of the dots. */
#include "glue.h"

#include <Rversion.h>

/* R 4.5 made the closure accessors API under new names. */
#if R_VERSION >= R_Version(4, 5, 0)
#define PGR_FORMALS(f) R_ClosureFormals(f)
#define PGR_BODY(f) R_ClosureBody(f)
#define PGR_CLOENV(f) R_ClosureEnv(f)
#else
#define PGR_FORMALS(f) FORMALS(f)
#define PGR_BODY(f) BODY(f)
#define PGR_CLOENV(f) CLOENV(f)
#endif

static SEXP methods = NULL; /* the .tensor_methods environment */
static SEXP self_sym, shape_sym, ndim_sym, dtype_sym, device_sym, requires_grad_sym, grad_sym,
    t_sym;

SEXP pgr_shape(SEXP);
SEXP pgr_dtype(SEXP);
SEXP pgr_device(SEXP);
SEXP pgr_requires_grad(SEXP);
SEXP pgr_grad(SEXP);

/* .Call(C_pgr_set_methods, env): the environment of the methods x$name binds. */
SEXP pgr_set_methods(SEXP env) {
  if (TYPEOF(env) != ENVSXP)
    pgr_error(PG_API_ERR_INTERNAL, "the tensor methods are not an environment");
  if (!methods) R_PreserveObject(env);
  methods = env;
  self_sym = Rf_install("self");
  shape_sym = Rf_install("shape");
  ndim_sym = Rf_install("ndim");
  dtype_sym = Rf_install("dtype");
  device_sym = Rf_install("device");
  requires_grad_sym = Rf_install("requires_grad");
  grad_sym = Rf_install("grad");
  t_sym = Rf_install("T");
  return R_NilValue;
}

static SEXP bind(SEXP m, SEXP x, SEXP name) {
  SEXP formals = TYPEOF(m) == CLOSXP ? PGR_FORMALS(m) : R_NilValue;
  if (formals == R_NilValue || TAG(formals) != self_sym)
    pgr_error(PG_API_ERR_INTERNAL, "the tensor method '%s' is not a function(self, ...)",
              CHAR(PRINTNAME(name)));
  SEXP env = PROTECT(R_NewEnv(PGR_CLOENV(m), FALSE, 0));
  Rf_defineVar(self_sym, x, env);
#if R_VERSION >= R_Version(4, 5, 0)
  SEXP f = R_mkClosure(CDR(formals), PGR_BODY(m), env);
#else
  SEXP f = Rf_allocSExp(CLOSXP);
  SET_FORMALS(f, CDR(formals));
  SET_BODY(f, PGR_BODY(m));
  SET_CLOENV(f, env);
#endif
  UNPROTECT(1);
  return f;
}

/* .Call(C_pgr_dollar, x, name): x$name, a property's value or a bound method. */
SEXP pgr_dollar(SEXP x, SEXP name) {
  SEXP sym = name;
  if (TYPEOF(name) == STRSXP && XLENGTH(name) == 1 && STRING_ELT(name, 0) != NA_STRING)
    sym = Rf_installTrChar(STRING_ELT(name, 0));
  if (TYPEOF(sym) != SYMSXP) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "x$name: name must be a name");
  pg_tensor_t h = pgr_handle(x, "x");
  if (sym == shape_sym) return pgr_shape(x);
  if (sym == ndim_sym) {
    size_t nd = 0;
    PGR_CHECK(pg.pg_tensor_shape(h, NULL, 0, &nd));
    return Rf_ScalarInteger((int)nd);
  }
  if (sym == dtype_sym) return pgr_dtype(x);
  if (sym == device_sym) return pgr_device(x);
  if (sym == requires_grad_sym) return pgr_requires_grad(x);
  if (sym == grad_sym) return pgr_grad(x);
  if (sym == t_sym) PGR_RETURN(pg.pg_tensor_T(h, &out_));
  SEXP m = methods ? Rf_findVarInFrame3(methods, sym, TRUE) : R_UnboundValue;
  if (m == R_UnboundValue)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "a polygrad_tensor has no field or method '%s'",
              CHAR(PRINTNAME(sym)));
  if (TYPEOF(m) == PROMSXP) m = Rf_eval(m, R_EmptyEnv);
  PROTECT(m);
  SEXP f = bind(m, x, sym);
  UNPROTECT(1);
  return f;
}
