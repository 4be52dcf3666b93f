// The host corpus's cases: one row each, a graph over CaseInputs and the dtypes it runs for.
#include "corpus.hpp"

namespace polygrad::cli {

namespace {

using Shape = Tensor::Shape;

const std::vector<pg_dtype> kFloats = {PG_DTYPE_FLOAT16, PG_DTYPE_BFLOAT16, PG_DTYPE_FLOAT32,
                                       PG_DTYPE_FLOAT64};
const std::vector<pg_dtype> kNumeric = {PG_DTYPE_INT8,     PG_DTYPE_INT16,   PG_DTYPE_INT32,
                                        PG_DTYPE_INT64,    PG_DTYPE_UINT8,   PG_DTYPE_UINT16,
                                        PG_DTYPE_UINT32,   PG_DTYPE_UINT64,  PG_DTYPE_FLOAT16,
                                        PG_DTYPE_BFLOAT16, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64};
const std::vector<pg_dtype> kAll = {
    PG_DTYPE_BOOL,     PG_DTYPE_INT8,    PG_DTYPE_INT16,  PG_DTYPE_INT32,  PG_DTYPE_INT64,
    PG_DTYPE_UINT8,    PG_DTYPE_UINT16,  PG_DTYPE_UINT32, PG_DTYPE_UINT64, PG_DTYPE_FLOAT16,
    PG_DTYPE_BFLOAT16, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64};
const std::vector<pg_dtype> kMatmul = {PG_DTYPE_INT32,    PG_DTYPE_INT64,   PG_DTYPE_FLOAT16,
                                       PG_DTYPE_BFLOAT16, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64};
const std::vector<pg_dtype> kWide = {PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64};

Tensor add(CaseInputs& in) {
  return in.values({3, 37}).add(in.values({3, 37}));
}
Tensor add_mul_wide(CaseInputs& in) {
  return in.values({8, 64}).add(in.values({8, 64})).mul(in.values({8, 64}));
}
Tensor mul_sub(CaseInputs& in) {
  return in.values({67}).mul(in.values({67})).sub(in.values({67}));
}
Tensor select_max(CaseInputs& in) {
  Tensor a = in.values({5, 19}), b = in.values({5, 19});
  return a.lt(b).where(a, b.maximum(in.values({5, 19})));
}
Tensor compare(CaseInputs& in) {
  Tensor a = in.values({41}), b = in.values({41});
  return a.lt(b).logical_or(a.eq(in.values({41})));
}
Tensor logic(CaseInputs& in) {
  Tensor a = in.values({53}), b = in.values({53});
  return a.logical_and(b).logical_or(in.values({53}).logical_not());
}
Tensor broadcast(CaseInputs& in) {
  return in.values({4, 1, 6}).add(in.values({1, 5, 6}));
}
Tensor broadcast_scalar(CaseInputs& in) {
  return in.values({3, 17}).mul(3).add(1);
}
Tensor to_float32(CaseInputs& in) {
  return in.values({29}).cast(PG_DTYPE_FLOAT32).mul(0.5);
}
Tensor from_float32(CaseInputs& in) {
  return in.values_of({29}, PG_DTYPE_FLOAT32).abs().mul(2.5).cast(in.dtype());
}
Tensor exp_log(CaseInputs& in) {
  return in.values({45}).exp().add(in.positive({45}).log());
}
Tensor sin_sqrt(CaseInputs& in) {
  return in.values({45}).sin().add(in.positive({45}).sqrt());
}
Tensor sum_rows(CaseInputs& in) {
  return in.values({7, 33}).sum(1);
}
Tensor sum_cols(CaseInputs& in) {
  return in.values({33, 7}).sum(0);
}
Tensor sum_long(CaseInputs& in) {
  return in.values({2, 1000}).sum(1);
}
Tensor max_rows(CaseInputs& in) {
  return in.values({9, 31}).max(1);
}
Tensor argmax(CaseInputs& in) {
  return in.values({6, 21}).argmax(1);
}
Tensor mean_var(CaseInputs& in) {
  Tensor a = in.values({6, 50});
  return a.mean(1).add(a.var(1));
}
Tensor softmax(CaseInputs& in) {
  return in.values({5, 37}).softmax(1);
}
Tensor softmax_wide(CaseInputs& in) {
  return in.values({2, 300}).softmax(1);
}
Tensor matmul_4x4(CaseInputs& in) {
  return in.values({4, 4}).matmul(in.values({4, 4}));
}
Tensor matmul_odd(CaseInputs& in) {
  return in.values({17, 33}).matmul(in.values({33, 9}));
}
Tensor matmul_batch(CaseInputs& in) {
  return in.values({3, 8, 16}).matmul(in.values({3, 16, 12}));
}
Tensor matmul_64(CaseInputs& in) {
  return in.values({64, 64}).matmul(in.values({64, 64}));
}
Tensor conv2d(CaseInputs& in) {
  return in.values({2, 3, 9, 9}).conv2d(in.values({4, 3, 3, 3}), in.values({4}), 1, 1, 1, 1);
}
Tensor conv2d_stride(CaseInputs& in) {
  return in.values({1, 2, 11, 11}).conv2d(in.values({3, 2, 3, 3}), std::nullopt, 1, 2);
}
Tensor gather(CaseInputs& in) {
  return in.values({6, 10}).gather(1, in.indices({6, 4}, 10));
}
Tensor gather_int64_index(CaseInputs& in) {
  return in.values({5, 12}).gather(1, in.indices({5, 7}, 12, PG_DTYPE_INT64));
}
Tensor pad_shrink(CaseInputs& in) {
  return in.values({5, 7}).pad({{1, 2}, {0, 3}}).shrink({{0, 6}, {2, 10}}).add(in.values({6, 8}));
}
Tensor cumsum(CaseInputs& in) {
  return in.values({4, 20}).cumsum(1);
}
Tensor transpose(CaseInputs& in) {
  return in.values({13, 29}).transpose().contiguous();
}

}  // namespace

const std::vector<CorpusCase>& corpus_cases() {
  // name, dtypes, graph, float tolerance in epsilons of the result dtype (RMS, relative)
  static const std::vector<CorpusCase> cases = {
      {"add", kNumeric, add},
      {"add_mul_8x64", kNumeric, add_mul_wide},
      {"mul_sub", kNumeric, mul_sub},
      {"where_max", kNumeric, select_max},
      {"compare", kNumeric, compare},
      {"logic", {PG_DTYPE_BOOL}, logic},
      {"broadcast", kNumeric, broadcast},
      {"broadcast_scalar", kNumeric, broadcast_scalar},
      {"cast_to_float32", kAll, to_float32},
      {"cast_from_float32", kNumeric, from_float32},
      {"exp_log", kFloats, exp_log, 8},
      {"sin_sqrt", kFloats, sin_sqrt, 8},
      {"sum_rows", kNumeric, sum_rows, 32},
      {"sum_cols", kNumeric, sum_cols, 32},
      // 1000 values of both signs: a group's tree and the cpu's blocked lanes add them in
      // different orders, each within about 1e-5 of the exact sum (five seeds: the cpu's
      // worst 8.6e-6, the emulator's 3.4e-6), so apart by up to twice that.
      {"sum_long", kWide, sum_long, 160},
      {"max_rows", kNumeric, max_rows},
      {"argmax", kNumeric, argmax},
      {"mean_var", kFloats, mean_var, 32},
      {"softmax", kFloats, softmax, 32},
      {"softmax_wide", kWide, softmax_wide, 32},
      {"matmul_4x4", kMatmul, matmul_4x4, 32},
      {"matmul_17x33x9", kMatmul, matmul_odd, 32},
      {"matmul_batch", kMatmul, matmul_batch, 32},
      {"matmul_64", kWide, matmul_64, 32},
      {"conv2d", kFloats, conv2d, 32},
      {"conv2d_stride2", kFloats, conv2d_stride, 32},
      {"gather", kNumeric, gather},
      {"gather_int64_index", kWide, gather_int64_index},
      {"pad_shrink", kNumeric, pad_shrink},
      {"cumsum", kNumeric, cumsum, 32},
      {"transpose", kAll, transpose},
  };
  return cases;
}

}  // namespace polygrad::cli
