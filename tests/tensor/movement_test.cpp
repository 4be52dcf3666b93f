// Movement, joining and indexing against torch (fixtures/movement.txt).
#include "harness.hpp"

#include <climits>

namespace {

using polygrad::Index;
using polygrad::Tensor;
using tensor_test::A;
using tensor_test::B;
using tensor_test::C;
using tensor_test::Case;

const tensor_test::OpTable& table() {
  static const tensor_test::OpTable t = {
      {"reshape_infer",
       [](const Case& c) {
         return A(c).reshape({4, -1});
       }},
      {"permute",
       [](const Case& c) {
         return A(c).permute({2, 0, 1});
       }},
      {"transpose", [](const Case& c) { return A(c).transpose(0, 2); }},
      {"T", [](const Case& c) { return A(c).T(); }},
      {"expand",
       [](const Case& c) {
         return A(c).expand({2, -1, 4});
       }},
      {"squeeze_all", [](const Case& c) { return A(c).squeeze(); }},
      {"squeeze_dim", [](const Case& c) { return A(c).squeeze(2); }},
      {"unsqueeze", [](const Case& c) { return A(c).unsqueeze(-1); }},
      {"flatten", [](const Case& c) { return A(c).flatten(1); }},
      {"flatten_all", [](const Case& c) { return A(c).flatten(); }},
      {"unflatten",
       [](const Case& c) {
         return A(c).unflatten(2, {2, 2});
       }},
      {"shrink",
       [](const Case& c) {
         return A(c).shrink({{0, 2}, {1, 3}, {0, 3}});
       }},
      {"pad_value",
       [](const Case& c) {
         return A(c).pad({{0, 0}, {0, 1}, {1, 2}}, -1.5);
       }},
      {"pad_crop",
       [](const Case& c) {
         return A(c).pad({{0, 0}, {1, 0}, {-1, 2}});
       }},
      {"flip",
       [](const Case& c) {
         return A(c).flip({0, 2});
       }},
      {"repeat",
       [](const Case& c) {
         return A(c).repeat({2, 1, 3});
       }},
      {"cat_dim1",
       [](const Case& c) {
         return Tensor::cat({A(c), B(c), c.in("c")}, 1);
       }},
      {"stack_dim1",
       [](const Case& c) {
         return Tensor::stack({A(c), B(c)}, 1);
       }},
      {"split3_0", [](const Case& c) { return A(c).split(3).at(0); }},
      {"split3_1", [](const Case& c) { return A(c).split(3).at(1); }},
      {"split3_2", [](const Case& c) { return A(c).split(3).at(2); }},
      {"split_sizes_0",
       [](const Case& c) {
         return A(c).split(std::vector<int64_t>{2, 5}).at(0);
       }},
      {"split_sizes_1",
       [](const Case& c) {
         return A(c).split(std::vector<int64_t>{2, 5}).at(1);
       }},
      {"chunk3_0", [](const Case& c) { return A(c).chunk(3).at(0); }},
      {"chunk3_1", [](const Case& c) { return A(c).chunk(3).at(1); }},
      {"chunk3_2", [](const Case& c) { return A(c).chunk(3).at(2); }},
      {"getitem_int", [](const Case& c) { return A(c)[1]; }},
      {"getitem_neg_int",
       [](const Case& c) {
         return A(c)[{-1, 2}];
       }},
      {"getitem_slice_step",
       [](const Case& c) {
         return A(c)[{Index::slice(), Index::slice(1, std::nullopt, 2),
                      Index::slice(std::nullopt, std::nullopt, 3)}];
       }},
      {"getitem_neg_step",
       [](const Case& c) {
         return A(c)[{Index::slice(), Index::slice(), Index::slice(4, 0, -2)}];
       }},
      {"getitem_none_ellipsis",
       [](const Case& c) {
         return A(c)[{Index::none(), Index::ellipsis(), 2}];
       }},
      {"getitem_mixed",
       [](const Case& c) {
         return A(c)[{Index::slice(1, 3), Index::none(), -2, Index::slice(std::nullopt, 4)}];
       }},
      {"gather_dim1", [](const Case& c) { return A(c).gather(1, B(c)); }},
      {"gather_dim0", [](const Case& c) { return A(c).gather(0, B(c)); }},
  };
  return t;
}

POLYGRAD_TORCH_FIXTURE_SUITE(Movement, "movement", table(), 0.0, 1e-7)

TEST(Dtypes, PadFillGatherAndTrianglesKeepTheTensorsDtype) {
  // pad's fill is converted to the tensor's dtype (an int64 past float32's 24 bits exactly).
  const Tensor i64(std::vector<int64_t>{1, -2, 3});
  const Tensor padded = i64.pad({{1, 0}}, static_cast<double>((int64_t{1} << 40) + 1));
  EXPECT_EQ(padded.dtype(), PG_DTYPE_INT64);
  EXPECT_EQ(padded.to_vector<int64_t>(), (std::vector<int64_t>{(int64_t{1} << 40) + 1, 1, -2, 3}));
  const Tensor u8 = Tensor(std::vector<uint8_t>{5, 6}).pad({{0, 1}}, 7.0);
  EXPECT_EQ(u8.dtype(), PG_DTYPE_UINT8);
  EXPECT_EQ(u8.to_vector<uint8_t>(), (std::vector<uint8_t>{5, 6, 7}));
  // gather of int8 stays int8 (a sum of one hit, widened to int32 inside, cast back).
  const Tensor i8 = Tensor(std::vector<int32_t>{-7, 100, 3}).cast(PG_DTYPE_INT8);
  const Tensor g = i8.gather(0, Tensor(std::vector<int32_t>{2, 0, 1, 1}));
  EXPECT_EQ(g.dtype(), PG_DTYPE_INT8);
  EXPECT_EQ(g.cast(PG_DTYPE_INT32).to_vector<int32_t>(), (std::vector<int32_t>{3, -7, 100, 100}));
  // tril of a bool matrix is bool.
  const Tensor b = Tensor::ones({2, 2}, PG_DTYPE_BOOL).tril();
  EXPECT_EQ(b.dtype(), PG_DTYPE_BOOL);
  EXPECT_EQ(b.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1, 1}));
}

TEST(Gather, ReadsOneElementPerIndexAndZeroOutsideTheAxis) {
  // gather and an embedding-style lookup read x at each index (one load, not a sum over the
  // axis); an index outside the axis gives 0, as the documented one-hot sum did.
  const Tensor x = Tensor::arange(20).reshape({5, 4}).cast(PG_DTYPE_FLOAT32);
  const Tensor idx(std::vector<int32_t>{3, 0, 4, 7, -2});
  const std::vector<float> got = x.gather(0, idx.reshape({5, 1}).expand({5, 4})).to_vector<float>();
  const std::vector<float> want{12, 13, 14, 15, 0, 1, 2, 3, 16, 17, 18, 19, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(got, want);
  const Tensor cols(std::vector<int64_t>{1, 3, 3, 0, 2});
  EXPECT_EQ(x.gather(1, cols.reshape({5, 1})).to_vector<float>(),
            (std::vector<float>{1, 7, 11, 12, 18}));
}

TEST(Gather, AZeroDimensionalInputOrIndexIsOneOfLengthOne) {
  // torch: tensor(5.).gather(0, tensor(0)) is tensor(5.), gather(-1, tensor([0, 0])) is
  // tensor([5., 5.]), tensor([1., 2.]).gather(0, tensor(1)) is tensor(2.); axis 1 is out of
  // range. (It was "axis 0 out of range for shape ()".)
  const Tensor five = Tensor::full({}, 5.0);
  const Tensor g = five.gather(0, Tensor::full({}, 0, PG_DTYPE_INT32));
  EXPECT_EQ(g.shape(), (std::vector<int64_t>{}));
  EXPECT_EQ(g.item<float>(), 5.0f);
  EXPECT_EQ(five.gather(-1, Tensor(std::vector<int32_t>{0, 0})).to_vector<float>(),
            (std::vector<float>{5, 5}));
  const Tensor h = Tensor(std::vector<float>{1, 2}).gather(0, Tensor::full({}, 1, PG_DTYPE_INT64));
  EXPECT_EQ(h.shape(), (std::vector<int64_t>{}));
  EXPECT_EQ(h.item<float>(), 2.0f);
  EXPECT_THROW(five.gather(1, Tensor::full({}, 0, PG_DTYPE_INT32)), polygrad::Error);
}

// A uint64 index works as any other int index (it failed with "eq: no dtype holds both uint64
// and int32", naming an op the caller never called); one_hot likewise.
TEST(Gather, Uint64IndexAndOneHot) {
  const Tensor x = Tensor::arange(6).reshape({2, 3}).cast(PG_DTYPE_FLOAT32);
  const Tensor idx = Tensor(std::vector<int64_t>{2, 0, 1, 1}).reshape({2, 2}).cast(PG_DTYPE_UINT64);
  EXPECT_EQ(x.gather(1, idx).to_vector<float>(), (std::vector<float>{2, 0, 4, 4}));
  const Tensor h = Tensor(std::vector<int64_t>{2, 0}).cast(PG_DTYPE_UINT64).one_hot(3);
  EXPECT_EQ(h.dtype(), PG_DTYPE_INT32);
  EXPECT_EQ(h.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 1, 1, 0, 0}));
}

TEST(Slicing, StepsPastTheAxisTakeTheFirstElement) {
  // x[::s] for |s| >= the length: one element (the last one for a negative step), as numpy.
  const Tensor x(std::vector<float>{0, 1, 2, 3, 4, 5});
  for (int64_t step : {int64_t{6}, int64_t{1} << 62, INT64_MAX})
    EXPECT_EQ(x[{Index::slice(std::nullopt, std::nullopt, step)}].to_vector<float>(),
              std::vector<float>{0});
  for (int64_t step : {int64_t{-6}, -INT64_MAX, INT64_MIN})
    EXPECT_EQ(x[{Index::slice(std::nullopt, std::nullopt, step)}].to_vector<float>(),
              std::vector<float>{5});
  EXPECT_EQ(x[{Index::slice(1, std::nullopt, 4)}].to_vector<float>(), (std::vector<float>{1, 5}));
}

TEST(Masks, TrianglesOfDiagonalsPastTheMatrix) {
  // tril keeps everything once k >= cols - 1 and nothing once k < -rows + 1; triu the reverse
  // (int32 aranges wrapped a diagonal of 2^31 or 2^32).
  const Tensor m = Tensor::ones({3, 3});
  for (int64_t k : {int64_t{3}, int64_t{1} << 31, int64_t{1} << 32}) {
    EXPECT_EQ(m.tril(k).sum().item<float>(), 9.0f) << k;
    EXPECT_EQ(m.triu(k).sum().item<float>(), 0.0f) << k;
    EXPECT_EQ(m.tril(-k).sum().item<float>(), 0.0f) << k;
    EXPECT_EQ(m.triu(-k).sum().item<float>(), 9.0f) << k;
  }
  EXPECT_EQ(m.tril(1).sum().item<float>(), 8.0f);
}

// An empty axis splits into one empty piece and chunks into n, as torch's and tinygrad's
// (torch.zeros(0, 3).split(2) has one (0, 3) piece, .chunk(3) three); both gave none.
TEST(Splitting, AnEmptyAxis) {
  Tensor e = Tensor::zeros({0, 3});
  std::vector<Tensor> s = e.split(2);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].shape(), (Tensor::Shape{0, 3}));
  std::vector<Tensor> c = e.chunk(3);
  ASSERT_EQ(c.size(), 3u);
  for (const Tensor& p : c) EXPECT_EQ(p.shape(), (Tensor::Shape{0, 3}));
  EXPECT_EQ(Tensor::arange(5).chunk(10).size(), 5u);  // (a non-empty axis: ceil(5 / 10) = 1)
}

// A 0-d tensor flips as one of one element: axis 0 or -1 (or none) gives it back, axis 1 is out
// of range, as torch's (torch.flip(torch.tensor(3.), [0]) is 3; flip raised for every axis).
TEST(Flip, AZeroDimTensorIsItsOwnFlip) {
  const Tensor x = Tensor::full({}, 3.0);
  for (const std::vector<int64_t>& axes :
       {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{-1}}) {
    const Tensor f = x.flip(axes);
    EXPECT_EQ(f.shape(), Tensor::Shape{});
    EXPECT_EQ(f.item<float>(), 3.0f);
  }
  EXPECT_THROW(x.flip({1}), polygrad::Error);
  EXPECT_THROW(x.flip({0, -1}), polygrad::Error);
}

// A 0-d tensor takes axis 0 or -1 as an axis of one element in flip and transpose, as torch's
// (torch.tensor(2.5).flip(0) and .transpose(0, -1) are the tensor; tinygrad's flip too).
TEST(ZeroDim, FlipAndTransposeTakeAxisZero) {
  Tensor s = Tensor::scalar(2.5);
  for (int64_t a : {0, -1}) {
    EXPECT_EQ(s.flip(a).shape(), Tensor::Shape{});
    EXPECT_EQ(s.flip(a).item<float>(), 2.5f);
  }
  EXPECT_EQ(s.transpose(0, -1).shape(), Tensor::Shape{});
  EXPECT_EQ(s.transpose(-1, 0).item<float>(), 2.5f);
  tensor_test::expect_user_error([&] { s.flip(1); }, {"flip", "axis 1", "()"});
  tensor_test::expect_user_error([&] { s.transpose(0, 2); }, {"transpose", "axis 2", "()"});
}

// Pad modes against torch's F.pad (values committed from torch 1.13): x = 1..12 as 3 x 4,
// rows padded (1, 2) and columns (2, 1); negative amounts crop the padded tensor (circular:
// crop, then pad).
TEST(PadModes, ReflectReplicateCircularAsTorch) {
  using polygrad::PadMode;
  std::vector<int32_t> v(12);
  for (int i = 0; i < 12; ++i) v[static_cast<size_t>(i)] = i + 1;
  const Tensor x = Tensor(v, {3, 4}).float_();
  const std::vector<std::pair<int64_t, int64_t>> p{{1, 2}, {2, 1}}, neg{{1, 0}, {-1, 2}};
  auto values = [](const Tensor& t) {
    std::vector<int32_t> r;
    for (float f : t.to_vector<float>()) r.push_back(static_cast<int32_t>(f));
    return r;
  };
  const Tensor r = x.pad(p, PadMode::reflect);
  EXPECT_EQ(r.shape(), (Tensor::Shape{6, 7}));
  EXPECT_EQ(values(r), (std::vector<int32_t>{7, 6, 5, 6, 7, 8, 7, 3,  2,  1, 2,  3,  4,  3,
                                             7, 6, 5, 6, 7, 8, 7, 11, 10, 9, 10, 11, 12, 11,
                                             7, 6, 5, 6, 7, 8, 7, 3,  2,  1, 2,  3,  4,  3}));
  EXPECT_EQ(values(x.pad(p, PadMode::replicate)),
            (std::vector<int32_t>{1, 1, 1, 2,  3,  4,  4,  1, 1, 1, 2,  3,  4,  4,
                                  5, 5, 5, 6,  7,  8,  8,  9, 9, 9, 10, 11, 12, 12,
                                  9, 9, 9, 10, 11, 12, 12, 9, 9, 9, 10, 11, 12, 12}));
  EXPECT_EQ(
      values(x.pad(p, PadMode::circular)),
      (std::vector<int32_t>{11, 12, 9, 10, 11, 12, 9, 3, 4, 1, 2, 3, 4, 1, 7, 8, 5, 6, 7, 8, 5,
                            11, 12, 9, 10, 11, 12, 9, 3, 4, 1, 2, 3, 4, 1, 7, 8, 5, 6, 7, 8, 5}));
  EXPECT_EQ(
      values(x.pad(neg, PadMode::reflect)),
      (std::vector<int32_t>{6, 7, 8, 7, 6, 2, 3, 4, 3, 2, 6, 7, 8, 7, 6, 10, 11, 12, 11, 10}));
  EXPECT_EQ(
      values(x.pad(neg, PadMode::replicate)),
      (std::vector<int32_t>{2, 3, 4, 4, 4, 2, 3, 4, 4, 4, 6, 7, 8, 8, 8, 10, 11, 12, 12, 12}));
  EXPECT_EQ(
      values(x.pad(neg, PadMode::circular)),
      (std::vector<int32_t>{10, 11, 12, 10, 11, 2, 3, 4, 2, 3, 6, 7, 8, 6, 7, 10, 11, 12, 10, 11}));
  // Reflect pads against the whole axis before the crop: [1, 2, 3] by (-1, 2) is [2, 3, 2, 1].
  EXPECT_EQ(values(Tensor(std::vector<float>{1, 2, 3}).pad({{-1, 2}}, PadMode::reflect)),
            (std::vector<int32_t>{2, 3, 2, 1}));
  // A circular pad of the whole axis; an int tensor keeps its dtype; constant is pad(value).
  const Tensor c = Tensor(v, {3, 4}).pad({{0, 3}, {4, 0}}, PadMode::circular);
  EXPECT_EQ(c.dtype(), PG_DTYPE_INT32);
  EXPECT_EQ(c.shape(), (Tensor::Shape{6, 8}));
  EXPECT_EQ(c.to_vector<int32_t>()[44], 9);
  EXPECT_EQ(values(x.pad({{0, 0}, {1, 0}}, PadMode::constant, 5))[0], 5);
  // The gradient of the mirrored elements adds up (torch: [2, 8, 18, 8] for the sum of squares).
  const Tensor y = Tensor(std::vector<float>{1, 2, 3, 4}).requires_grad(true);
  y.pad({{2, 1}}, PadMode::reflect).square().sum().backward();
  EXPECT_EQ(y.grad()->to_vector<float>(), (std::vector<float>{2, 8, 18, 8}));
  tensor_test::expect_user_error(
      [&] {
        x.pad({{0, 0}, {4, 0}}, PadMode::reflect);
      },
      {"pad: reflect", "(4, 0)", "axis 1", "(3, 4)"});
  tensor_test::expect_user_error(
      [&] {
        x.pad({{0, 5}, {0, 0}}, PadMode::circular);
      },
      {"pad: circular", "(0, 5)", "axis 0"});
  tensor_test::expect_user_error(
      [&] {
        Tensor::zeros({0, 2}).pad({{1, 0}, {0, 0}}, PadMode::replicate);
      },
      {"pad: replicate", "non-empty"});
}

}  // namespace
