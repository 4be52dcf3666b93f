/* safetensors files through the core's reader and writer (pg_safetensors_*): the same checks
 * and error messages as the Python package, sharded checkpoints through their index, and every
 * dtype's bytes moved exactly. */
#include "glue.h"

#include <string.h>

/* The open file behind an external pointer, so that an R error (a longjmp) between open and
 * the end of the call still frees it, through the finalizer. */
static void close_file(SEXP ptr) {
  pg_safetensors_t f = (pg_safetensors_t)R_ExternalPtrAddr(ptr);
  if (f) pg.pg_safetensors_free(f);
  R_ClearExternalPtr(ptr);
}

static int ends_with(const char* s, const char* tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

/* .Call(C_pgr_safetensors_load, path, device): a named list of tensors as stored, with the
 * file's metadata (a named list of strings) as attribute "metadata". A path ending in ".json"
 * is a sharded checkpoint's index. */
SEXP pgr_safetensors_load(SEXP path, SEXP device) {
  const char* p = pgr_string(path, "path");
  const char* dev = pgr_device_arg(device);
  pg_safetensors_t f = NULL;
  PGR_CHECK(ends_with(p, ".json") ? pg.pg_safetensors_open_index(p, &f)
                                  : pg.pg_safetensors_open(p, &f));
  SEXP holder = PROTECT(R_MakeExternalPtr(f, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(holder, close_file, TRUE);
  size_t n = 0;
  PGR_CHECK(pg.pg_safetensors_count(f, &n));
  SEXP out = PROTECT(Rf_allocVector(VECSXP, (R_xlen_t)n));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)n));
  for (size_t i = 0; i < n; ++i) {
    const char* name = NULL;
    const char* stored = NULL;
    pg_dtype dtype = PG_DTYPE_VOID;
    PGR_CHECK(pg.pg_safetensors_entry(f, i, &name, &stored, &dtype, NULL));
    if (dtype == PG_DTYPE_VOID)
      pgr_error(PG_API_ERR_INVALID_ARGUMENT,
                "pg_load_safetensors: %s: '%s' has dtype %s, which polygrad does not hold", p, name,
                stored);
    SET_STRING_ELT(names, (R_xlen_t)i, Rf_mkCharCE(name, CE_UTF8));
    pg_tensor_t t = NULL;
    PGR_CHECK(pg.pg_safetensors_tensor(f, name, PG_DTYPE_VOID, dev, &t));
    SET_VECTOR_ELT(out, (R_xlen_t)i, pgr_wrap(t));
  }
  Rf_setAttrib(out, R_NamesSymbol, names);
  size_t nmeta = 0;
  PGR_CHECK(pg.pg_safetensors_metadata_count(f, &nmeta));
  if (nmeta > 0) {
    SEXP meta = PROTECT(Rf_allocVector(VECSXP, (R_xlen_t)nmeta));
    SEXP keys = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)nmeta));
    for (size_t i = 0; i < nmeta; ++i) {
      const char* key = NULL;
      const char* value = NULL;
      PGR_CHECK(pg.pg_safetensors_metadata(f, i, &key, &value));
      SET_STRING_ELT(keys, (R_xlen_t)i, Rf_mkCharCE(key, CE_UTF8));
      SET_VECTOR_ELT(meta, (R_xlen_t)i, Rf_ScalarString(Rf_mkCharCE(value, CE_UTF8)));
    }
    Rf_setAttrib(meta, R_NamesSymbol, keys);
    Rf_setAttrib(out, Rf_install("metadata"), meta);
    UNPROTECT(2);
  }
  close_file(holder);
  UNPROTECT(3);
  return out;
}

/* UTF-8 strings of a character vector (R_alloc'd). */
static const char** utf8_strings(SEXP v, const char* what) {
  if (TYPEOF(v) != STRSXP) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must be strings", what);
  R_xlen_t n = XLENGTH(v);
  const char** out = (const char**)R_alloc((size_t)(n > 0 ? n : 1), sizeof(char*));
  for (R_xlen_t i = 0; i < n; ++i) {
    if (STRING_ELT(v, i) == NA_STRING)
      pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s must not be NA", what);
    out[i] = Rf_translateCharUTF8(STRING_ELT(v, i));
  }
  return out;
}

/* .Call(C_pgr_safetensors_save, path, names, tensors, metadata_keys, metadata_values) */
SEXP pgr_safetensors_save(SEXP path, SEXP names, SEXP tensors, SEXP keys, SEXP values) {
  const char* p = pgr_string(path, "path");
  size_t n = 0;
  pg_tensor_t* handles = pgr_handles(tensors, &n, "tensors");
  if ((size_t)XLENGTH(names) != n)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "pg_save_safetensors: %lld names for %lld tensors",
              (long long)XLENGTH(names), (long long)n);
  const char** tensor_names = utf8_strings(names, "names");
  const size_t nmeta = (size_t)XLENGTH(keys);
  if ((size_t)XLENGTH(values) != nmeta)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "pg_save_safetensors: metadata keys and values differ");
  const char** meta_keys = utf8_strings(keys, "metadata names");
  const char** meta_values = utf8_strings(values, "metadata values");
  PGR_CHECK(pg.pg_safetensors_save(p, tensor_names, handles, n, meta_keys, meta_values, nmeta));
  return R_NilValue;
}
