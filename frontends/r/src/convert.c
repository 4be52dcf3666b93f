/* Values between R and tensors. R arrays are column-major, tensors row-major: an R array of
 * dim c(d1, ..., dk) becomes a tensor of shape (d1, ..., dk) with the same element at every
 * index, so the copy walks the tensor in row-major order while it tracks the column-major
 * offset of the same index. */
#include "glue.h"

#include <math.h>
#include <string.h>

/* Walks the n elements of `dims` in row-major order; `col` is the column-major offset. */
typedef struct {
  size_t nd;
  const int64_t* dims;
  int64_t* idx;
  int64_t* stride; /* column-major strides */
  int64_t col;
} walk_t;

static void walk_init(walk_t* w, const int64_t* dims, size_t nd) {
  w->nd = nd;
  w->dims = dims;
  w->idx = (int64_t*)R_alloc(nd ? nd : 1, sizeof(int64_t));
  w->stride = (int64_t*)R_alloc(nd ? nd : 1, sizeof(int64_t));
  int64_t s = 1;
  for (size_t k = 0; k < nd; ++k) {
    w->idx[k] = 0;
    w->stride[k] = s;
    s *= dims[k];
  }
  w->col = 0;
}

static inline void walk_next(walk_t* w) {
  for (size_t k = w->nd; k-- > 0;) {
    w->col += w->stride[k];
    if (++w->idx[k] < w->dims[k]) return;
    w->col -= w->stride[k] * w->dims[k];
    w->idx[k] = 0;
  }
}

static int64_t count(const int64_t* dims, size_t nd) {
  int64_t n = 1;
  for (size_t k = 0; k < nd; ++k) n *= dims[k];
  return n;
}

static size_t itemsize(pg_dtype d) {
  switch (d) {
    case PG_DTYPE_BOOL:
    case PG_DTYPE_INT8:
    case PG_DTYPE_UINT8:
      return 1;
    case PG_DTYPE_INT16:
    case PG_DTYPE_UINT16:
    case PG_DTYPE_FLOAT16:
    case PG_DTYPE_BFLOAT16:
      return 2;
    case PG_DTYPE_INT32:
    case PG_DTYPE_UINT32:
    case PG_DTYPE_FLOAT32:
      return 4;
    case PG_DTYPE_INT64:
    case PG_DTYPE_UINT64:
    case PG_DTYPE_FLOAT64:
      return 8;
    default:
      return 0;
  }
}

/* Range [lo, hi) of an int dtype as doubles. */
static void int_range(pg_dtype d, double* lo, double* hi) {
  *lo = 0;
  switch (d) {
    case PG_DTYPE_INT8:
      *lo = -0x1p7;
      *hi = 0x1p7;
      break;
    case PG_DTYPE_INT16:
      *lo = -0x1p15;
      *hi = 0x1p15;
      break;
    case PG_DTYPE_INT32:
      *lo = -0x1p31;
      *hi = 0x1p31;
      break;
    case PG_DTYPE_INT64:
      *lo = -0x1p63;
      *hi = 0x1p63;
      break;
    case PG_DTYPE_UINT8:
      *hi = 0x1p8;
      break;
    case PG_DTYPE_UINT16:
      *hi = 0x1p16;
      break;
    case PG_DTYPE_UINT32:
      *hi = 0x1p32;
      break;
    default:
      *hi = 0x1p64;
      break;
  }
}

/* Writes element `v` (already checked) as dtype d at dst[j]. */
static inline void put(void* dst, size_t j, pg_dtype d, double v) {
  switch (d) {
    case PG_DTYPE_BOOL:
      ((uint8_t*)dst)[j] = v != 0;
      break;
    case PG_DTYPE_INT8:
      ((int8_t*)dst)[j] = (int8_t)v;
      break;
    case PG_DTYPE_INT16:
      ((int16_t*)dst)[j] = (int16_t)v;
      break;
    case PG_DTYPE_INT32:
      ((int32_t*)dst)[j] = (int32_t)v;
      break;
    case PG_DTYPE_INT64:
      ((int64_t*)dst)[j] = (int64_t)v;
      break;
    case PG_DTYPE_UINT8:
      ((uint8_t*)dst)[j] = (uint8_t)v;
      break;
    case PG_DTYPE_UINT16:
      ((uint16_t*)dst)[j] = (uint16_t)v;
      break;
    case PG_DTYPE_UINT32:
      ((uint32_t*)dst)[j] = (uint32_t)v;
      break;
    case PG_DTYPE_UINT64:
      ((uint64_t*)dst)[j] = (uint64_t)v;
      break;
    case PG_DTYPE_FLOAT32:
      ((float*)dst)[j] = (float)v;
      break;
    default:
      ((double*)dst)[j] = v;
      break;
  }
}

pg_tensor_t pgr_tensor_from_r(SEXP data, pg_dtype dtype, const char* device) {
  int type = TYPEOF(data);
  if (type != REALSXP && type != INTSXP && type != LGLSXP)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT,
              "pg_tensor: data must be a numeric, integer or logical vector, matrix or array, "
              "not %s",
              Rf_type2char(type));
  SEXP dim = Rf_getAttrib(data, R_DimSymbol);
  size_t nd = Rf_isNull(dim) ? 1 : (size_t)XLENGTH(dim);
  int64_t* dims = (int64_t*)R_alloc(nd ? nd : 1, sizeof(int64_t));
  if (Rf_isNull(dim))
    dims[0] = XLENGTH(data);
  else
    for (size_t k = 0; k < nd; ++k) dims[k] = INTEGER(dim)[k];
  /* float16 and bfloat16 have no C type here: the values go in as float32 and the core casts */
  pg_dtype host =
      dtype == PG_DTYPE_FLOAT16 || dtype == PG_DTYPE_BFLOAT16 ? PG_DTYPE_FLOAT32 : dtype;
  size_t isz = itemsize(host);
  if (!isz)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "pg_tensor: dtype %s holds no data",
              pgr_dtype_name(dtype));
  int64_t n = count(dims, nd);
  void* buf = R_alloc((size_t)(n > 0 ? n : 1), isz);
  int is_float = pgr_dtype_is_float(host), is_bool = host == PG_DTYPE_BOOL;
  double lo = 0, hi = 0;
  if (!is_float && !is_bool) int_range(host, &lo, &hi);
  walk_t w;
  walk_init(&w, dims, nd);
  for (int64_t j = 0; j < n; ++j, walk_next(&w)) {
    double v;
    if (type == REALSXP) {
      v = REAL(data)[w.col];
      if (ISNAN(v) && !is_float)
        pgr_error(PG_API_ERR_INVALID_ARGUMENT, "pg_tensor: %s at element %lld has no %s value",
                  ISNA(v) ? "NA" : "NaN", (long long)w.col + 1, pgr_dtype_name(dtype));
    } else {
      int iv = type == INTSXP ? INTEGER(data)[w.col] : LOGICAL(data)[w.col];
      if (iv == NA_INTEGER) {
        if (!is_float)
          pgr_error(PG_API_ERR_INVALID_ARGUMENT, "pg_tensor: NA at element %lld has no %s value",
                    (long long)w.col + 1, pgr_dtype_name(dtype));
        v = NAN;
      } else {
        v = iv;
      }
    }
    if (!is_float && !is_bool && (v != trunc(v) || v < lo || v >= hi))
      pgr_error(PG_API_ERR_INVALID_ARGUMENT, "pg_tensor: %g at element %lld is no %s value", v,
                (long long)w.col + 1, pgr_dtype_name(dtype));
    put(buf, (size_t)j, host, v);
  }
  pg_tensor_t out = NULL;
  PGR_CHECK(pg.pg_tensor_from_data(buf, host, dims, nd, device, &out));
  if (host != dtype) {
    pg_tensor_t cast = NULL;
    pg_api_status st = pg.pg_tensor_cast(out, dtype, &cast);
    pg.pg_tensor_free(out);
    PGR_CHECK(st);
    out = cast;
  }
  return out;
}

/* .Call(C_pgr_from_r, data, dtype, device) */
SEXP pgr_from_r(SEXP data, SEXP dtype, SEXP device) {
  return pgr_wrap(pgr_tensor_from_r(data, pgr_dtype_arg(dtype), pgr_device_arg(device)));
}

/* The handle to read values from: t when it is realised, else a detached handle (*temp, freed
 * by the caller), so that reading does not replace t's graph (a backward() later still flows
 * through it). float16/bfloat16 are read as float32. */
static pg_tensor_t readable(pg_tensor_t t, pg_tensor_t* temp) {
  int realized = 0;
  *temp = NULL;
  PGR_CHECK(pg.pg_tensor_is_realized(t, &realized));
  pg_tensor_t r = t;
  if (!realized) {
    PGR_CHECK(pg.pg_tensor_detach(t, temp));
    r = *temp;
  }
  pg_dtype d = pgr_tensor_dtype(r);
  if (d == PG_DTYPE_FLOAT16 || d == PG_DTYPE_BFLOAT16) {
    pg_tensor_t cast = NULL;
    pg_api_status st = pg.pg_tensor_cast(r, PG_DTYPE_FLOAT32, &cast);
    if (*temp) pg.pg_tensor_free(*temp);
    *temp = NULL;
    PGR_CHECK(st);
    *temp = r = cast;
  }
  return r;
}

/* Copies t's values to an R_alloc'd buffer; writes dims and dtype. */
static void* host_values(pg_tensor_t t, int64_t** dims, size_t* nd, pg_dtype* dtype, int64_t* n) {
  pg_tensor_t temp = NULL;
  pg_tensor_t r = readable(t, &temp);
  int64_t small[16];
  pg_api_status st = pg.pg_tensor_shape(r, small, 16, nd);
  if (st == PG_API_OK) {
    *dims = (int64_t*)R_alloc(*nd ? *nd : 1, sizeof(int64_t));
    if (*nd <= 16)
      memcpy(*dims, small, *nd * sizeof(int64_t));
    else
      st = pg.pg_tensor_shape(r, *dims, *nd, nd);
  }
  if (st == PG_API_OK) st = pg.pg_tensor_dtype(r, dtype);
  void* buf = NULL;
  if (st == PG_API_OK) {
    *n = count(*dims, *nd);
    size_t bytes = (size_t)*n * itemsize(*dtype);
    buf = R_alloc(bytes ? bytes : 1, 1);
    st = pg.pg_tensor_to_host(r, buf, bytes);
  }
  if (temp) pg.pg_tensor_free(temp);
  PGR_CHECK(st);
  return buf;
}

static double get(const void* src, size_t j, pg_dtype d) {
  switch (d) {
    case PG_DTYPE_BOOL:
      return ((const uint8_t*)src)[j] != 0;
    case PG_DTYPE_INT8:
      return ((const int8_t*)src)[j];
    case PG_DTYPE_INT16:
      return ((const int16_t*)src)[j];
    case PG_DTYPE_INT32:
      return ((const int32_t*)src)[j];
    case PG_DTYPE_INT64:
      return (double)((const int64_t*)src)[j];
    case PG_DTYPE_UINT8:
      return ((const uint8_t*)src)[j];
    case PG_DTYPE_UINT16:
      return ((const uint16_t*)src)[j];
    case PG_DTYPE_UINT32:
      return ((const uint32_t*)src)[j];
    case PG_DTYPE_UINT64:
      return (double)((const uint64_t*)src)[j];
    case PG_DTYPE_FLOAT32:
      return ((const float*)src)[j];
    default:
      return ((const double*)src)[j];
  }
}

void pgr_check_positions(pg_tensor_t index, int64_t n, int64_t except, const char* what) {
  int realized = 0;
  PGR_CHECK(pg.pg_tensor_is_realized(index, &realized));
  if (!realized || strncmp(pgr_tensor_device(index), "cpu", 3) != 0) return;
  pg_dtype dt = pgr_tensor_dtype(index);
  if (pgr_dtype_is_float(dt) || dt == PG_DTYPE_BOOL) return; /* the core names the dtype */
  int64_t count_ = 0;
  PGR_CHECK(pg.pg_tensor_numel(index, &count_));
  size_t bytes = (size_t)count_ * itemsize(dt);
  void* buf = R_alloc(bytes ? bytes : 1, 1);
  PGR_CHECK(pg.pg_tensor_to_host(index, buf, bytes));
  for (int64_t j = 0; j < count_; ++j) {
    double v = get(buf, (size_t)j, dt);
    if ((v < 1 || v > (double)n) && v != (double)except)
      pgr_error(PG_API_ERR_INDEX,
                "%s: index %.0f is out of bounds for a size of %lld (indices count from 1)", what,
                v, (long long)n);
  }
}

/* .Call(C_pgr_to_r, x): the values as an R vector in column-major order with a dim attribute
 * (none for a 0-d tensor): double for floats, int64 and uint32/64 (exact up to 2^53), integer
 * for the smaller ints, logical for bool. */
SEXP pgr_to_r(SEXP x) {
  int64_t* dims = NULL;
  size_t nd = 0;
  pg_dtype dt = PG_DTYPE_VOID;
  int64_t n = 0;
  const void* buf = host_values(pgr_handle(x, "x"), &dims, &nd, &dt, &n);
  int rtype;
  switch (dt) {
    case PG_DTYPE_BOOL:
      rtype = LGLSXP;
      break;
    case PG_DTYPE_INT8:
    case PG_DTYPE_INT16:
    case PG_DTYPE_INT32:
    case PG_DTYPE_UINT8:
    case PG_DTYPE_UINT16:
      rtype = INTSXP;
      break;
    default:
      rtype = REALSXP;
      break;
  }
  SEXP out = PROTECT(Rf_allocVector(rtype, (R_xlen_t)n));
  walk_t w;
  walk_init(&w, dims, nd);
  for (int64_t j = 0; j < n; ++j, walk_next(&w)) {
    double v = get(buf, (size_t)j, dt);
    if (rtype == REALSXP)
      REAL(out)[w.col] = v;
    else if (rtype == INTSXP)
      INTEGER(out)[w.col] = (int)v;
    else
      LOGICAL(out)[w.col] = (int)v;
  }
  if (nd > 0) {
    SEXP dim = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)nd));
    for (size_t k = 0; k < nd; ++k) {
      if (dims[k] > 2147483647)
        pgr_error(PG_API_ERR_INVALID_ARGUMENT,
                  "an axis of %lld elements is longer than an R dim holds", (long long)dims[k]);
      INTEGER(dim)[k] = (int)dims[k];
    }
    Rf_setAttrib(out, R_DimSymbol, dim);
    UNPROTECT(1);
  }
  UNPROTECT(1);
  return out;
}

/* .Call(C_pgr_item, x): the value of a one-element tensor, typed as pgr_to_r types it. */
SEXP pgr_item(SEXP x) {
  pg_tensor_t t = pgr_handle(x, "x");
  int64_t n = 0;
  PGR_CHECK(pg.pg_tensor_numel(t, &n));
  if (n != 1)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT,
              "item: the tensor has %lld elements; item() needs exactly one", (long long)n);
  SEXP v = PROTECT(pgr_to_r(x));
  Rf_setAttrib(v, R_DimSymbol, R_NilValue);
  UNPROTECT(1);
  return v;
}

/* .Call(C_pgr_scalar, value, dtype, device): a 0-d tensor. */
SEXP pgr_scalar(SEXP value, SEXP dtype, SEXP device) {
  PGR_RETURN(pg.pg_tensor_scalar(pgr_double(value, "value"), pgr_dtype_arg(dtype),
                                 pgr_device_arg(device), &out_));
}
