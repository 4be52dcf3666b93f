/* Element-wise ops: the op tables of polygrad.h looked up by name, and R's operators with
 * tensors or R values on either side. */
#include "glue.h"

#include <string.h>

typedef pg_api_status (*unary_fn)(pg_tensor_t, pg_tensor_t*);
typedef pg_api_status (*param_fn)(pg_tensor_t, double, pg_tensor_t*);
typedef pg_api_status (*binary_fn)(pg_tensor_t, pg_tensor_t, pg_tensor_t*);
typedef pg_api_status (*scalar_fn)(pg_tensor_t, pg_scalar, pg_tensor_t*);

static const char* name_arg(SEXP name) {
  return pgr_string(name, "op name");
}

static unary_fn find_unary(const char* n) {
#define X(name) \
  if (strcmp(n, #name) == 0) return pg.pg_tensor_##name;
  PG_TENSOR_UNARY_OPS(X)
  PG_TENSOR_LIKE_OPS(X)
#undef X
  return NULL;
}

static binary_fn find_binary(const char* n) {
#define X(name) \
  if (strcmp(n, #name) == 0) return pg.pg_tensor_##name;
  PG_TENSOR_BINARY_OPS(X)
#undef X
  return NULL;
}

static scalar_fn find_scalar(const char* n) {
#define X(name) \
  if (strcmp(n, #name) == 0) return pg.pg_tensor_##name##_scalar;
  PG_TENSOR_SCALAR_OPS(X)
#undef X
  return NULL;
}

/* .Call(C_pgr_unary, x, name): pg_tensor_<name>(x) of the unary and *_like lists. */
SEXP pgr_unary(SEXP x, SEXP name) {
  unary_fn f = find_unary(name_arg(name));
  if (!f) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "no unary op '%s'", name_arg(name));
  PGR_RETURN(f(pgr_handle(x, "x"), &out_));
}

/* .Call(C_pgr_param, x, name, p): leaky_relu, elu, softplus, celu with their parameter. */
SEXP pgr_param(SEXP x, SEXP name, SEXP p) {
  const char* n = name_arg(name);
  param_fn f = NULL;
#define X(op) \
  if (strcmp(n, #op) == 0) f = pg.pg_tensor_##op;
  PG_TENSOR_PARAM_OPS(X)
#undef X
  if (!f) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "no op '%s' with a parameter", n);
  PGR_RETURN(f(pgr_handle(x, "x"), pgr_double(p, n), &out_));
}

static pg_scalar scalar_of(SEXP v) {
  if (TYPEOF(v) == INTSXP) return pg_scalar_int(pgr_int64(v, "a scalar operand"));
  return pg_scalar_float(pgr_double(v, "a scalar operand"));
}

/* `name` with the tensor t on the left and the R value v on the right. */
static pg_tensor_t tensor_op_value(const char* name, binary_fn fb, pg_tensor_t t, SEXP v) {
  pg_tensor_t out = NULL;
  scalar_fn fs = TYPEOF(v) == LGLSXP ? NULL : find_scalar(name);
  if (fs && pgr_is_r_scalar(v)) {
    PGR_CHECK(fs(t, scalar_of(v), &out));
    return out;
  }
  pg_tensor_t o = pgr_is_r_scalar(v) ? pgr_scalar_like(t, v) : pgr_operand_like(t, v);
  pg_api_status st = fb(t, o, &out);
  pg.pg_tensor_free(o);
  PGR_CHECK(st);
  return out;
}

/* The same op with its operands swapped, where one exists. */
static const char* mirrored(const char* n) {
  static const char* const same[] = {"add",         "mul",        "eq",          "ne",
                                     "maximum",     "minimum",    "logical_and", "logical_or",
                                     "bitwise_and", "bitwise_or", "bitwise_xor"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; ++i)
    if (strcmp(n, same[i]) == 0) return n;
  if (strcmp(n, "lt") == 0) return "gt";
  if (strcmp(n, "gt") == 0) return "lt";
  if (strcmp(n, "le") == 0) return "ge";
  if (strcmp(n, "ge") == 0) return "le";
  return NULL;
}

static SEXP binop(const char* name, SEXP a, SEXP b) {
  binary_fn fb = find_binary(name);
  if (!fb) pgr_error(PG_API_ERR_INVALID_ARGUMENT, "no binary op '%s'", name);
  int at = pgr_is_tensor(a), bt = pgr_is_tensor(b);
  pg_tensor_t out = NULL;
  if (at && bt) {
    PGR_CHECK(fb(pgr_handle(a, "e1"), pgr_handle(b, "e2"), &out));
  } else if (at) {
    out = tensor_op_value(name, fb, pgr_handle(a, "e1"), b);
  } else if (bt) {
    pg_tensor_t t = pgr_handle(b, "e2");
    const char* m = mirrored(name);
    if (m) {
      out = tensor_op_value(m, find_binary(m), t, a);
    } else if (strcmp(name, "pow") == 0 && pgr_is_r_scalar(a) && TYPEOF(a) != LGLSXP) {
      PGR_CHECK(pg.pg_tensor_pow_base(scalar_of(a), t, &out));
    } else {
      pg_tensor_t o = pgr_is_r_scalar(a) ? pgr_scalar_like(t, a) : pgr_operand_like(t, a);
      pg_api_status st = fb(o, t, &out);
      pg.pg_tensor_free(o);
      PGR_CHECK(st);
    }
  } else {
    pgr_error(PG_API_ERR_INVALID_ARGUMENT, "%s: neither operand is a polygrad_tensor", name);
  }
  return pgr_wrap(out);
}

/* .Call(C_pgr_binop, name, a, b): pg_tensor_<name> of two operands, tensors or R values. */
SEXP pgr_binop(SEXP name, SEXP a, SEXP b) {
  return binop(name_arg(name), a, b);
}

/* .Call(C_pgr_ops, generic, e1, e2): R's operators (e2 NULL for a unary one). */
SEXP pgr_ops(SEXP generic, SEXP e1, SEXP e2) {
  static const char* const table[][2] = {
      {"+", "add"},  {"-", "sub"},        {"*", "mul"}, {"/", "div"},         {"^", "pow"},
      {"%%", "mod"}, {"%/%", "floordiv"}, {"==", "eq"}, {"!=", "ne"},         {"<", "lt"},
      {"<=", "le"},  {">", "gt"},         {">=", "ge"}, {"&", "logical_and"}, {"|", "logical_or"}};
  enum { N = sizeof table / sizeof table[0] };
  /* The generic's CHARSXP of each entry: R keeps one CHARSXP per string, so the constants of
   * the operator methods are these and most calls find their entry by pointer. */
  static SEXP chars[N];
  if (!chars[0]) {
    for (size_t i = 0; i < N; ++i) {
      chars[i] = Rf_mkChar(table[i][0]);
      R_PreserveObject(chars[i]);
    }
  }
  const char* g = name_arg(generic);
  if (Rf_isNull(e2)) {
    const char* u = strcmp(g, "-") == 0 ? "neg" : strcmp(g, "!") == 0 ? "logical_not" : NULL;
    if (strcmp(g, "+") == 0) return e1;
    if (!u)
      pgr_error(PG_API_ERR_INVALID_ARGUMENT, "unary operator '%s' is not defined for tensors", g);
    PGR_RETURN(find_unary(u)(pgr_handle(e1, "e1"), &out_));
  }
  SEXP c = STRING_ELT(generic, 0);
  for (size_t i = 0; i < N; ++i)
    if (c == chars[i]) return binop(table[i][1], e1, e2);
  for (size_t i = 0; i < N; ++i)
    if (strcmp(g, table[i][0]) == 0) return binop(table[i][1], e1, e2);
  pgr_error(PG_API_ERR_INVALID_ARGUMENT, "operator '%s' is not defined for tensors", g);
}

/* Converts an R where/lerp operand: a tensor handle, or a new one (*temp) made like `like`. */
static pg_tensor_t operand(SEXP v, pg_tensor_t like, pg_tensor_t* temp) {
  if (pgr_is_tensor(v)) return pgr_handle(v, "operand");
  *temp = pgr_is_r_scalar(v) ? pgr_scalar_like(like, v) : pgr_operand_like(like, v);
  return *temp;
}

/* .Call(C_pgr_where, cond, a, b): cond ? a : b, a and b tensors or R values. */
SEXP pgr_where(SEXP cond, SEXP a, SEXP b) {
  pg_tensor_t c = pgr_handle(cond, "condition");
  pg_tensor_t out = NULL;
  if (!pgr_is_tensor(a) && !pgr_is_tensor(b) && pgr_is_r_scalar(a) && pgr_is_r_scalar(b) &&
      TYPEOF(a) != LGLSXP && TYPEOF(b) != LGLSXP) {
    PGR_CHECK(pg.pg_tensor_where_scalar(c, scalar_of(a), scalar_of(b), &out));
    return pgr_wrap(out);
  }
  /* a scalar branch takes the dtype of the tensor branch (or of cond when both are R) */
  pg_tensor_t ta = NULL, tb = NULL;
  pg_tensor_t like = pgr_is_tensor(a)   ? pgr_handle(a, "x")
                     : pgr_is_tensor(b) ? pgr_handle(b, "y")
                                        : c;
  pg_tensor_t ha = operand(a, like, &ta);
  pg_tensor_t hb = operand(b, like, &tb);
  pg_api_status st = pg.pg_tensor_where(c, ha, hb, &out);
  if (ta) pg.pg_tensor_free(ta);
  if (tb) pg.pg_tensor_free(tb);
  PGR_CHECK(st);
  return pgr_wrap(out);
}

/* .Call(C_pgr_lerp, x, end, weight) */
SEXP pgr_lerp(SEXP x, SEXP end, SEXP weight) {
  pg_tensor_t h = pgr_handle(x, "x"), te = NULL, tw = NULL, out = NULL;
  pg_tensor_t he = operand(end, h, &te);
  pg_tensor_t hw = operand(weight, h, &tw);
  pg_api_status st = pg.pg_tensor_lerp(h, he, hw, &out);
  if (te) pg.pg_tensor_free(te);
  if (tw) pg.pg_tensor_free(tw);
  PGR_CHECK(st);
  return pgr_wrap(out);
}

/* .Call(C_pgr_clamp, x, min, max): NULL bounds are open; an integer bound keeps an int tensor's
 * dtype. */
SEXP pgr_clamp(SEXP x, SEXP lo, SEXP hi) {
  pg_scalar l = pg_scalar_float(0), u = pg_scalar_float(0);
  if (!Rf_isNull(lo)) l = scalar_of(lo);
  if (!Rf_isNull(hi)) u = scalar_of(hi);
  PGR_RETURN(pg.pg_tensor_clamp_scalar(pgr_handle(x, "x"), Rf_isNull(lo) ? NULL : &l,
                                       Rf_isNull(hi) ? NULL : &u, &out_));
}

SEXP pgr_hardtanh(SEXP x, SEXP lo, SEXP hi) {
  PGR_RETURN(pg.pg_tensor_hardtanh(pgr_handle(x, "x"), pgr_double(lo, "min_val"),
                                   pgr_double(hi, "max_val"), &out_));
}

SEXP pgr_masked_fill(SEXP x, SEXP mask, SEXP value) {
  PGR_RETURN(pg.pg_tensor_masked_fill(pgr_handle(x, "x"), pgr_handle(mask, "mask"),
                                      scalar_of(value), &out_));
}

/* .Call(C_pgr_tri, x, name, diagonal): tril / triu. */
SEXP pgr_tri(SEXP x, SEXP name, SEXP diagonal) {
  int64_t d = pgr_int64(diagonal, "diagonal");
  if (strcmp(name_arg(name), "tril") == 0)
    PGR_RETURN(pg.pg_tensor_tril(pgr_handle(x, "x"), d, &out_));
  PGR_RETURN(pg.pg_tensor_triu(pgr_handle(x, "x"), d, &out_));
}

/* .Call(C_pgr_like, x, name, value): zeros_like ... randn_like (value NULL), full_like. */
SEXP pgr_full_like(SEXP x, SEXP value) {
  PGR_RETURN(pg.pg_tensor_full_like(pgr_handle(x, "x"), pgr_double(value, "fill_value"), &out_));
}
