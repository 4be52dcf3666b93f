/* Constructors (zeros, ones, full, rand, randn, randint, arange, linspace, eye) and devices. */
#include "glue.h"

#include <string.h>

typedef pg_api_status (*fill_fn)(const int64_t*, size_t, pg_dtype, const char*, pg_tensor_t*);

/* .Call(C_pgr_fill, name, shape, dtype, device): zeros, ones, empty, rand, randn. */
SEXP pgr_fill(SEXP name, SEXP shape, SEXP dtype, SEXP device) {
  const char* n = pgr_string(name, "name");
  fill_fn f = NULL;
#define X(op) \
  if (strcmp(n, #op) == 0) f = pg.pg_tensor_##op;
  PG_TENSOR_FILL_OPS(X)
#undef X
  if (!f) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "no constructor '%s'", n);
  size_t nd = 0;
  int64_t* dims = pgr_int64s(shape, &nd, "size");
  PGR_RETURN(f(dims, nd, pgr_dtype_arg(dtype), pgr_device_arg(device), &out_));
}

SEXP pgr_full(SEXP shape, SEXP value, SEXP dtype, SEXP device) {
  size_t nd = 0;
  int64_t* dims = pgr_int64s(shape, &nd, "size");
  PGR_RETURN(pg.pg_tensor_full(dims, nd, pgr_double(value, "fill_value"), pgr_dtype_arg(dtype),
                               pgr_device_arg(device), &out_));
}

SEXP pgr_randint(SEXP low, SEXP high, SEXP shape, SEXP dtype, SEXP device) {
  size_t nd = 0;
  int64_t* dims = pgr_int64s(shape, &nd, "size");
  PGR_RETURN(pg.pg_tensor_randint(pgr_int64(low, "low"), pgr_int64(high, "high"), dims, nd,
                                  pgr_dtype_arg(dtype), pgr_device_arg(device), &out_));
}

/* .Call(C_pgr_arange, start, stop, step, dtype, device): stop excluded; dtype NULL picks int32
 * for whole numbers, float32 otherwise. */
SEXP pgr_arange(SEXP start, SEXP stop, SEXP step, SEXP dtype, SEXP device) {
  pg_dtype d = Rf_isNull(dtype) ? PG_DTYPE_VOID : pgr_dtype_arg(dtype);
  PGR_RETURN(pg.pg_tensor_arange(pgr_double(start, "start"), pgr_double(stop, "end"),
                                 pgr_double(step, "step"), d, pgr_device_arg(device), &out_));
}

SEXP pgr_linspace(SEXP start, SEXP stop, SEXP steps, SEXP dtype, SEXP device) {
  PGR_RETURN(pg.pg_tensor_linspace(pgr_double(start, "start"), pgr_double(stop, "end"),
                                   pgr_int64(steps, "steps"), pgr_dtype_arg(dtype),
                                   pgr_device_arg(device), &out_));
}

SEXP pgr_eye(SEXP n, SEXP m, SEXP dtype, SEXP device) {
  PGR_RETURN(pg.pg_tensor_eye(pgr_int64(n, "n"), pgr_int64(m, "m"), pgr_dtype_arg(dtype),
                              pgr_device_arg(device), &out_));
}

/* ---- devices and plugins -------------------------------------------------------------- */

static SEXP string_result(pg_api_status st, const char* s) {
  PGR_CHECK(st);
  return Rf_ScalarString(Rf_mkCharCE(s ? s : "", CE_UTF8));
}

SEXP pgr_device_list(void) {
  const char* s = NULL;
  pg_api_status st = pg.pg_device_list(&s);
  return string_result(st, s);
}

SEXP pgr_device_default(void) {
  const char* s = NULL;
  pg_api_status st = pg.pg_device_default(&s);
  return string_result(st, s);
}

SEXP pgr_device_canonical(SEXP name) {
  const char* s = NULL;
  pg_api_status st = pg.pg_device_canonical(pgr_device_arg(name), &s);
  return string_result(st, s);
}

SEXP pgr_plugin_load(SEXP name) {
  const char* s = NULL;
  pg_api_status st = pg.pg_plugin_load(pgr_string(name, "name_or_path"), &s);
  return string_result(st, s);
}

SEXP pgr_plugin_report(SEXP json) {
  const char* s = NULL;
  pg_api_status st = pg.pg_plugin_report(pgr_flag(json, "json"), &s);
  return string_result(st, s);
}
