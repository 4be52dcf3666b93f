/* Loads libpolygrad with dlopen and resolves the C API table (api.h); raises R conditions for
 * failing calls. */
#include "glue.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

pgr_api pg;

static void* library = NULL;
static SEXP package_namespace = NULL;

/* .Call(C_pgr_init, ns): remembers the package namespace, where errors are raised from. */
SEXP pgr_init(SEXP ns) {
  if (!package_namespace) R_PreserveObject(ns);
  package_namespace = ns;
  return R_NilValue;
}

static void signal(pg_api_status status, const char* message) __attribute__((noreturn));
static void signal(pg_api_status status, const char* message) {
  SEXP msg = PROTECT(Rf_ScalarString(Rf_mkCharCE(message, CE_UTF8)));
  SEXP st = PROTECT(Rf_ScalarInteger((int)status));
  SEXP call = PROTECT(Rf_lang3(Rf_install(".pg_signal"), st, msg));
  Rf_eval(call, package_namespace ? package_namespace : R_BaseEnv);
  UNPROTECT(3);
  Rf_error("%s", message); /* not reached: .pg_signal always signals */
}

void pgr_throw_status(pg_api_status status) {
  signal(status, library ? pg.pg_last_error() : "polygrad: libpolygrad is not loaded");
}

void pgr_error(pg_api_status status, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  signal(status, buf);
}

/* .Call(C_pgr_load, path): dlopen the library at `path` and resolve every entry point. Returns
 * NULL on success, else a message (the package's .onLoad tries the next candidate). */
SEXP pgr_load(SEXP path) {
  if (library) return R_NilValue;
  const char* p = pgr_string(path, "path");
  void* h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return Rf_mkString(e ? e : "dlopen failed");
  }
  const char* missing = NULL;
  memset(&pg, 0, sizeof pg);
#define X_(name)                           \
  if (!missing) {                          \
    *(void**)(&pg.name) = dlsym(h, #name); \
    if (!pg.name) missing = #name;         \
  }
#define X(name) X_(name)
  PGR_API_FUNCS(X)
  PG_TENSOR_FILL_OPS(PGR_TENSOR_FN)
  PG_TENSOR_UNARY_OPS(PGR_TENSOR_FN)
  PG_TENSOR_LIKE_OPS(PGR_TENSOR_FN)
  PG_TENSOR_PARAM_OPS(PGR_TENSOR_FN)
  PG_TENSOR_BINARY_OPS(PGR_TENSOR_FN)
  PG_TENSOR_SCALAR_OPS(PGR_SCALAR_FN)
  PG_TENSOR_REDUCE_OPS(PGR_TENSOR_FN)
  PG_TENSOR_AXIS_OPS(PGR_TENSOR_FN)
  PG_TENSOR_LIST_OPS(PGR_TENSOR_FN)
#undef X
#undef X_
  if (missing) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s does not export %s (a build older than this package)", p,
             missing);
    memset(&pg, 0, sizeof pg);
    /* (never dlclose'd: the library may have started threads or registered plugins) */
    return Rf_mkString(buf);
  }
  library = h;
  return R_NilValue;
}

/* .Call(C_pgr_is_loaded) */
SEXP pgr_is_loaded(void) {
  return Rf_ScalarLogical(library != NULL);
}
