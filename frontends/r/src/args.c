/* Argument conversion: R numbers, dims, dtypes and devices as the C API takes them. */
#include "glue.h"

#include <math.h>
#include <string.h>

static const char* const dtype_names[] = {
#define PG_X(name, str, size, kind) str,
    PG_DTYPES(PG_X)
#undef PG_X
};
static const char dtype_kinds[] = {
#define PG_X(name, str, size, kind) kind,
    PG_DTYPES(PG_X)
#undef PG_X
};
#define N_DTYPES ((int)(sizeof dtype_names / sizeof dtype_names[0]))

static int is_number(SEXP v) {
  return TYPEOF(v) == REALSXP || TYPEOF(v) == INTSXP || TYPEOF(v) == LGLSXP;
}

static int64_t whole(double d, const char* what) {
  if (ISNAN(d)) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s: NA is not a whole number", what);
  if (d != trunc(d) || !(d >= -0x1p63 && d < 0x1p63))
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s: %g is not a whole number that int64 holds", what,
              d);
  return (int64_t)d;
}

static int64_t element(SEXP v, R_xlen_t i, const char* what) {
  if (TYPEOF(v) == REALSXP) return whole(REAL(v)[i], what);
  int x = TYPEOF(v) == INTSXP ? INTEGER(v)[i] : LOGICAL(v)[i];
  if (x == NA_INTEGER) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s: NA is not a whole number", what);
  return x;
}

int64_t pgr_int64(SEXP v, const char* what) {
  if (!is_number(v) || XLENGTH(v) != 1)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must be one whole number", what);
  return element(v, 0, what);
}

int64_t* pgr_int64s(SEXP v, size_t* n, const char* what) {
  if (Rf_isNull(v)) {
    *n = 0;
    return NULL;
  }
  if (!is_number(v)) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must be whole numbers", what);
  R_xlen_t len = XLENGTH(v);
  int64_t* out = (int64_t*)R_alloc((size_t)(len > 0 ? len : 1), sizeof(int64_t));
  for (R_xlen_t i = 0; i < len; ++i) out[i] = element(v, i, what);
  *n = (size_t)len;
  return out;
}

double pgr_double(SEXP v, const char* what) {
  if (!is_number(v) || XLENGTH(v) != 1)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must be one number", what);
  if (TYPEOF(v) == REALSXP) return REAL(v)[0];
  int x = TYPEOF(v) == INTSXP ? INTEGER(v)[0] : LOGICAL(v)[0];
  if (x == NA_INTEGER) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must not be NA", what);
  return x;
}

int pgr_flag(SEXP v, const char* what) {
  return pgr_double(v, what) != 0.0;
}

static int64_t to_axis(int64_t d, const char* what) {
  if (d == 0)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT,
              "%s: dim 0 does not exist; dims count from 1 (negative ones from the end)", what);
  return d > 0 ? d - 1 : d;
}

int64_t pgr_axis(SEXP v, const char* what) {
  return to_axis(pgr_int64(v, what), what);
}

int64_t* pgr_axes(SEXP v, size_t* n, const char* what) {
  int64_t* out = pgr_int64s(v, n, what);
  for (size_t i = 0; i < *n; ++i) out[i] = to_axis(out[i], what);
  return out;
}

const char* pgr_string(SEXP v, const char* what) {
  if (TYPEOF(v) != STRSXP || XLENGTH(v) != 1 || STRING_ELT(v, 0) == NA_STRING)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must be one string", what);
  return CHAR(STRING_ELT(v, 0));
}

pg_tensor_t* pgr_handles(SEXP list, size_t* n, const char* what) {
  if (TYPEOF(list) != VECSXP)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must be a list of tensors, not %s", what,
              Rf_type2char(TYPEOF(list)));
  *n = (size_t)XLENGTH(list);
  pg_tensor_t* hs = (pg_tensor_t*)R_alloc(*n ? *n : 1, sizeof(pg_tensor_t));
  for (size_t i = 0; i < *n; ++i) hs[i] = pgr_handle(VECTOR_ELT(list, (R_xlen_t)i), what);
  return hs;
}

pg_dtype pgr_dtype_arg(SEXP v) {
  if (TYPEOF(v) != STRSXP || XLENGTH(v) != 1 || STRING_ELT(v, 0) == NA_STRING)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "dtype must be one string, such as \"float32\"");
  const char* s = CHAR(STRING_ELT(v, 0));
  for (int i = 1; i < N_DTYPES; ++i)
    if (strcmp(s, dtype_names[i]) == 0) return (pg_dtype)i;
  pgr_error(PG_API_ERR_INVALID_ARGUMENT,
            "unknown dtype \"%s\" (one of bool, int8, int16, int32, int64, uint8, uint16, "
            "uint32, uint64, float16, bfloat16, float32, float64)",
            s);
}

const char* pgr_dtype_name(pg_dtype d) {
  return (int)d >= 0 && (int)d < N_DTYPES ? dtype_names[d] : "unknown";
}

int pgr_dtype_is_float(pg_dtype d) {
  return (int)d >= 0 && (int)d < N_DTYPES && dtype_kinds[d] == 'f';
}

const char* pgr_device_arg(SEXP v) {
  if (Rf_isNull(v)) return NULL;
  if (TYPEOF(v) != STRSXP || XLENGTH(v) != 1 || STRING_ELT(v, 0) == NA_STRING)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "device must be one string, such as \"cpu\"");
  return CHAR(STRING_ELT(v, 0));
}

int pgr_is_r_scalar(SEXP v) {
  return is_number(v) && XLENGTH(v) == 1 && Rf_getAttrib(v, R_DimSymbol) == R_NilValue;
}

pg_dtype pgr_tensor_dtype(pg_tensor_t t) {
  pg_dtype d = PG_DTYPE_VOID;
  PGR_CHECK(pg.pg_tensor_dtype(t, &d));
  return d;
}

const char* pgr_tensor_device(pg_tensor_t t) {
  const char* d = NULL;
  PGR_CHECK(pg.pg_tensor_device(t, &d));
  return d;
}

pg_tensor_t pgr_scalar_like(pg_tensor_t t, SEXP v) {
  pg_dtype own = pgr_tensor_dtype(t), dt = own;
  double value = pgr_double(v, "a scalar operand");
  if (TYPEOF(v) == REALSXP) {
    if (!pgr_dtype_is_float(own)) dt = PG_DTYPE_FLOAT32;
  } else if (TYPEOF(v) == INTSXP) {
    if (own == PG_DTYPE_BOOL) dt = PG_DTYPE_INT32;
  }
  pg_tensor_t out = NULL;
  PGR_CHECK(pg.pg_tensor_scalar(value, dt, pgr_tensor_device(t), &out));
  return out;
}

pg_tensor_t pgr_operand_like(pg_tensor_t t, SEXP v) {
  pg_dtype own = pgr_tensor_dtype(t), dt;
  switch (TYPEOF(v)) {
    case REALSXP:
      dt = pgr_dtype_is_float(own) ? own : PG_DTYPE_FLOAT32;
      break;
    case INTSXP:
      dt = pgr_dtype_is_float(own) ? own : PG_DTYPE_INT32;
      break;
    case LGLSXP:
      dt = PG_DTYPE_BOOL;
      break;
    default:
      pgr_error(PG_API_ERR_INVALID_ARGUMENT,
                "an operand of a tensor must be a tensor, number, integer or logical, not %s",
                Rf_type2char(TYPEOF(v)));
  }
  return pgr_tensor_from_r(v, dt, pgr_tensor_device(t));
}
