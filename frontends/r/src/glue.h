/* Shared helpers of the .Call glue: handles as external pointers, argument conversion, and
 * polygrad errors raised as R conditions. */
#ifndef POLYGRAD_R_GLUE_H
#define POLYGRAD_R_GLUE_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>

#include "api.h"

/* Raises the R condition for a failing C API status, with pg_last_error()'s message
 * (.pg_signal in R/errors.R picks the class). */
void pgr_throw_status(pg_api_status status) __attribute__((noreturn));
/* Raises a polygrad condition of `status` with a message of the glue's own. */
void pgr_error(pg_api_status status, const char* fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

#define PGR_CHECK(call)                                          \
  do {                                                           \
    pg_api_status pgr_status_ = (call);                          \
    if (pgr_status_ != PG_API_OK) pgr_throw_status(pgr_status_); \
  } while (0)

/* Whether `x` is a live polygrad tensor. */
int pgr_is_tensor(SEXP x);
/* The handle behind a tensor argument; a value error naming `what` for anything else. */
pg_tensor_t pgr_handle(SEXP x, const char* what);
/* The handle of an optional tensor argument (R NULL: NULL). */
pg_tensor_t pgr_opt_handle(SEXP x, const char* what);
/* A new R tensor owning `h` (freed by its finalizer); under with_no_grad() it holds a detached
 * handle instead. */
SEXP pgr_wrap(pg_tensor_t h);
/* Calls `status` (a C API call writing `*out`) and wraps the result. */
#define PGR_RETURN(call_with_out) \
  do {                            \
    pg_tensor_t out_ = NULL;      \
    PGR_CHECK(call_with_out);     \
    return pgr_wrap(out_);        \
  } while (0)

/* A whole number that fits int64, from a length-1 numeric or integer vector. */
int64_t pgr_int64(SEXP v, const char* what);
/* A numeric or integer vector of whole numbers as int64s (R_alloc'd; freed with the call). */
int64_t* pgr_int64s(SEXP v, size_t* n, const char* what);
/* A length-1 number as a double. */
double pgr_double(SEXP v, const char* what);
/* A length-1 logical (or number) as 0/1. */
int pgr_flag(SEXP v, const char* what);
/* An R dim (1-based; negative counts from the end) as the C API's 0-based axis. */
int64_t pgr_axis(SEXP v, const char* what);
/* Each of a vector of R dims as an axis (R_alloc'd). */
int64_t* pgr_axes(SEXP v, size_t* n, const char* what);
/* A length-1 string (not NA); a value error naming `what` otherwise. */
const char* pgr_string(SEXP v, const char* what);
/* The handles of a list of tensors (R_alloc'd). */
pg_tensor_t* pgr_handles(SEXP list, size_t* n, const char* what);
/* A dtype name ("float32") as its code. */
pg_dtype pgr_dtype_arg(SEXP v);
/* The dtype name of a code. */
const char* pgr_dtype_name(pg_dtype d);
/* Whether a dtype is a float type. */
int pgr_dtype_is_float(pg_dtype d);
/* A device argument: R NULL is NULL (the default device), else the string. */
const char* pgr_device_arg(SEXP v);
/* A tensor's dtype and canonical device. */
pg_dtype pgr_tensor_dtype(pg_tensor_t t);
const char* pgr_tensor_device(pg_tensor_t t);
/* A 0-d tensor holding the R scalar `v` in the dtype `t <op> v` promotes to (Python's rule:
 * a logical keeps t's dtype, an integer too except with a bool t (int32), a double gives
 * float32 unless t is float). The caller frees it. */
pg_tensor_t pgr_scalar_like(pg_tensor_t t, SEXP v);
/* An R vector or array as a tensor on t's device (t's dtype when both are float). */
pg_tensor_t pgr_operand_like(pg_tensor_t t, SEXP v);
/* A tensor from an R vector or array (dims from its dim attribute, 1-d otherwise). */
pg_tensor_t pgr_tensor_from_r(SEXP data, pg_dtype dtype, const char* device);
/* When `index` is realised on the cpu (its values known), a polygrad_index_error naming `what`
 * for the first value outside 1..n that is not `except`. (The glue makes R's 1-based indices
 * 0-based with a lazy op, which hides them from the core's own check.) */
void pgr_check_positions(pg_tensor_t index, int64_t n, int64_t except, const char* what);
/* Whether `v` is a plain R number or logical of length 1 (no dim attribute). */
int pgr_is_r_scalar(SEXP v);

#endif /* POLYGRAD_R_GLUE_H */
