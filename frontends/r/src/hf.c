/* GPT-2 and its tokenizer through the core (pg_gpt2_*, pg_tokenizer_*): the model the Python
 * package's polygrad.hf runs, held by an external pointer whose finalizer frees it. */
#include "glue.h"

#include <string.h>

static SEXP gpt2_tag(void) {
  static SEXP tag = NULL;
  if (!tag) tag = Rf_install("polygrad_gpt2");
  return tag;
}

static SEXP tokenizer_tag(void) {
  static SEXP tag = NULL;
  if (!tag) tag = Rf_install("polygrad_tokenizer");
  return tag;
}

static void free_gpt2(SEXP ptr) {
  pg_gpt2_t m = (pg_gpt2_t)R_ExternalPtrAddr(ptr);
  if (m) pg.pg_gpt2_free(m);
  R_ClearExternalPtr(ptr);
}

static void free_tokenizer(SEXP ptr) {
  pg_tokenizer_t t = (pg_tokenizer_t)R_ExternalPtrAddr(ptr);
  if (t) pg.pg_tokenizer_free(t);
  R_ClearExternalPtr(ptr);
}

static pg_gpt2_t gpt2_of(SEXP ptr) {
  if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != gpt2_tag())
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "model: not a GPT-2 from pg_load_hf()");
  pg_gpt2_t m = (pg_gpt2_t)R_ExternalPtrAddr(ptr);
  if (!m) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "model: the GPT-2 was freed");
  return m;
}

static pg_tokenizer_t tokenizer_of(SEXP ptr) {
  if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != tokenizer_tag())
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "tokenizer: not a tokenizer from pg_tokenizer()");
  pg_tokenizer_t t = (pg_tokenizer_t)R_ExternalPtrAddr(ptr);
  if (!t) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "tokenizer: it was freed");
  return t;
}

/* .Call(C_pgr_gpt2_load, path, max_batch, max_seq_len, device) */
SEXP pgr_gpt2_load(SEXP path, SEXP max_batch, SEXP max_seq_len, SEXP device) {
  pg_gpt2_t m = NULL;
  PGR_CHECK(pg.pg_gpt2_load(pgr_string(path, "path"), pgr_int64(max_batch, "max_batch"),
                            pgr_int64(max_seq_len, "max_seq_len"), pgr_device_arg(device), &m));
  SEXP ptr = PROTECT(R_MakeExternalPtr(m, gpt2_tag(), R_NilValue));
  R_RegisterCFinalizerEx(ptr, free_gpt2, TRUE);
  UNPROTECT(1);
  return ptr;
}

/* .Call(C_pgr_gpt2_config, model): the sizes, named. */
SEXP pgr_gpt2_config(SEXP model) {
  static const char* names[] = {"vocab_size", "n_positions", "n_embd",    "n_layer",
                                "n_head",     "n_inner",     "max_batch", "max_seq_len"};
  int64_t values[8] = {0};
  PGR_CHECK(pg.pg_gpt2_config(gpt2_of(model), values, 8, NULL));
  SEXP out = PROTECT(Rf_allocVector(REALSXP, 8));
  SEXP nm = PROTECT(Rf_allocVector(STRSXP, 8));
  for (int i = 0; i < 8; ++i) {
    REAL(out)[i] = (double)values[i];
    SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
  }
  Rf_setAttrib(out, R_NamesSymbol, nm);
  UNPROTECT(2);
  return out;
}

/* .Call(C_pgr_gpt2_forward, model, tokens, positions): lazy logits (B, T, vocab). */
SEXP pgr_gpt2_forward(SEXP model, SEXP tokens, SEXP positions) {
  PGR_RETURN(pg.pg_gpt2_forward(gpt2_of(model), pgr_handle(tokens, "tokens"),
                                pgr_opt_handle(positions, "positions"), &out_));
}

/* .Call(C_pgr_gpt2_prefill, model, tokens): the last position's logits (B, vocab). */
SEXP pgr_gpt2_prefill(SEXP model, SEXP tokens) {
  PGR_RETURN(pg.pg_gpt2_prefill(gpt2_of(model), pgr_handle(tokens, "tokens"), &out_));
}

/* .Call(C_pgr_gpt2_step, model, tokens): one decoding step's logits (B, vocab). */
SEXP pgr_gpt2_step(SEXP model, SEXP tokens) {
  PGR_RETURN(pg.pg_gpt2_step(gpt2_of(model), pgr_handle(tokens, "tokens"), &out_));
}

/* .Call(C_pgr_tokenizer_load, vocab_path, merges_path) */
SEXP pgr_tokenizer_load(SEXP vocab, SEXP merges) {
  pg_tokenizer_t t = NULL;
  PGR_CHECK(pg.pg_tokenizer_load(pgr_string(vocab, "vocab"), pgr_string(merges, "merges"), &t));
  SEXP ptr = PROTECT(R_MakeExternalPtr(t, tokenizer_tag(), R_NilValue));
  R_RegisterCFinalizerEx(ptr, free_tokenizer, TRUE);
  UNPROTECT(1);
  return ptr;
}

/* .Call(C_pgr_tokenizer_encode, tokenizer, text): the ids, as doubles (int64 values). */
SEXP pgr_tokenizer_encode(SEXP tokenizer, SEXP text) {
  pg_tokenizer_t t = tokenizer_of(tokenizer);
  if (TYPEOF(text) != STRSXP || XLENGTH(text) != 1 || STRING_ELT(text, 0) == NA_STRING)
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "text must be one string");
  const char* s = Rf_translateCharUTF8(STRING_ELT(text, 0));
  size_t n = 0;
  PGR_CHECK(pg.pg_tokenizer_encode(t, s, strlen(s), NULL, 0, &n));
  int64_t* ids = (int64_t*)R_alloc(n > 0 ? n : 1, sizeof(int64_t));
  PGR_CHECK(pg.pg_tokenizer_encode(t, s, strlen(s), ids, n, &n));
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)n));
  for (size_t i = 0; i < n; ++i) REAL(out)[i] = (double)ids[i];
  UNPROTECT(1);
  return out;
}

/* .Call(C_pgr_tokenizer_decode, tokenizer, ids): the text, as one UTF-8 string. */
SEXP pgr_tokenizer_decode(SEXP tokenizer, SEXP ids) {
  pg_tokenizer_t t = tokenizer_of(tokenizer);
  size_t n = 0;
  int64_t* v = pgr_int64s(ids, &n, "ids");
  size_t size = 0;
  PGR_CHECK(pg.pg_tokenizer_decode(t, v, n, NULL, 0, &size));
  char* text = R_alloc(size + 1, 1);
  PGR_CHECK(pg.pg_tokenizer_decode(t, v, n, text, size, &size));
  text[size] = '\0';
  return Rf_ScalarString(Rf_mkCharLenCE(text, (int)size, CE_UTF8));
}
