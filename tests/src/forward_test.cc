// SPDX-License-Identifier: MIT
#include "src/forward.h"

#include <doctest/doctest.h>

#include <cmath>

#include "src/constructions.h"
#include "src/linf_error.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

using testing::cast_matrix;
using testing::near;
using testing::random_model;

// double vs 256-bit MPFR on O(1) inputs with weights of std 0.5: each output
// is a sum of O(L n^2) rounded terms of size O(1), so the double result is
// good to a few hundred ulps; 1e-12 leaves three orders of margin.
constexpr double kDoubleVsMpfr = 1e-12;

TEST_CASE("double and 256-bit MPFR agree on random models of every kind") {
  const Task task{6, 7, TriggerRange::kPaper};
  for (AttentionKind kind :
       {AttentionKind::kSoftmax, AttentionKind::kRelu, AttentionKind::kSoftmaxOffByOne,
        AttentionKind::kSigmoid, AttentionKind::kSoftpick, AttentionKind::kGated}) {
    for (ModelKind mk : {ModelKind::kSingleLayer, ModelKind::kResidual}) {
      const int layers = mk == ModelKind::kResidual ? 2 : 1;
      const Model<double> md = random_model(task.n, kind, 0.5, 7, layers, 2, mk);
      TaskSampler sampler(task, 11);
      const Sample s = sampler.next();
      const auto rd = forward(md, s.X);
      PrecisionScope scope(256);
      const auto rm = forward(md.cast<Mpfr>(), cast_matrix<Mpfr>(s.X));
      for (int i = 0; i < task.L; ++i) {
        for (int d = 0; d < task.n; ++d) {
          CHECK(near(rd.output(i, d), to_double(rm.output(i, d)), kDoubleVsMpfr));
        }
      }
    }
  }
}

TEST_CASE("the MPFI enclosure contains the 1024-bit MPFR value") {
  const Task task{5, 6, TriggerRange::kPaper};
  for (AttentionKind kind :
       {AttentionKind::kSoftmax, AttentionKind::kRelu, AttentionKind::kSoftmaxOffByOne,
        AttentionKind::kSigmoid, AttentionKind::kSoftpick, AttentionKind::kGated}) {
    const Model<double> md = random_model(task.n, kind, 2.0, 3, 2, 2, ModelKind::kResidual);
    TaskSampler sampler(task, 5);
    const Sample s = sampler.next();
    Matrix<Mpfr> reference;
    std::vector<std::vector<Matrix<Mpfr>>> ref_attn;
    {
      PrecisionScope high(1024);
      auto r = forward(md.cast<Mpfr>(), cast_matrix<Mpfr>(s.X));
      reference = r.output;
      ref_attn = r.attention;
    }
    Matrix<Mpfi> enclosure;
    std::vector<std::vector<Matrix<Mpfi>>> attn;
    {
      PrecisionScope low(80);
      auto r = forward(md.cast<Mpfi>(), cast_matrix<Mpfi>(s.X));
      enclosure = r.output;
      attn = r.attention;
    }
    PrecisionScope high(1024);
    for (int i = 0; i < task.L; ++i) {
      for (int d = 0; d < task.n; ++d) {
        CHECK(Mpfr(bmp::lower(enclosure(i, d))) <= reference(i, d));
        CHECK(Mpfr(bmp::upper(enclosure(i, d))) >= reference(i, d));
      }
      for (int k = 0; k <= i; ++k) {
        CHECK(Mpfr(bmp::lower(attn[1][1](i, k))) <= ref_attn[1][1](i, k));
        CHECK(Mpfr(bmp::upper(attn[1][1](i, k))) >= ref_attn[1][1](i, k));
      }
    }
  }
}

TEST_CASE("softmax rows sum to one; the interval row sum contains one") {
  const Task task{5, 8, TriggerRange::kPaper};
  const Model<double> md = random_model(task.n, AttentionKind::kSoftmax, 3.0, 17);
  TaskSampler sampler(task, 19);
  const Sample s = sampler.next();
  const auto rd = forward(md, s.X);
  PrecisionScope scope(64);
  const auto ri = forward(md.cast<Mpfi>(), cast_matrix<Mpfi>(s.X));
  for (int i = 0; i < task.L; ++i) {
    // Row sum of i + 1 rounded quotients: within (i + 1) ulps of 1.
    CHECK(std::abs(rd.attention[0][0].row(i).sum() - 1.0) <= 16 * 0x1.0p-52);
    Mpfi sum(0);
    for (int k = 0; k <= i; ++k) sum += ri.attention[0][0](i, k);
    CHECK(bmp::in(Mpfr(1), sum));
  }
}

TEST_CASE("causality: changing token k changes no output before k") {
  const Task task{6, 8, TriggerRange::kPaper};
  for (AttentionKind kind : {AttentionKind::kSoftmax, AttentionKind::kRelu}) {
    const Model<double> md = random_model(task.n, kind, 0.7, 23, 2, 2, ModelKind::kResidual);
    TaskSampler sampler(task, 29);
    const Sample s = sampler.next();
    const auto base = forward(md, s.X);
    for (int k = 1; k < task.L; ++k) {
      Matrix<double> X = s.X;
      X(k, kFirstContent) = X(k, kFirstContent) > 0 ? -0.9 : 0.9;
      const auto changed = forward(md, X);
      CHECK(changed.output.topRows(k) == base.output.topRows(k));
      CHECK(changed.output.row(k) != base.output.row(k));
    }
  }
}

TEST_CASE("the sink family at beta = 30, n = L = 16 behaves like (L-1) e^-beta") {
  const Task task{16, 16, TriggerRange::kPaper};
  const double beta = 30;
  const Model<double> m = sink_family<double>(task.n, beta);
  const double predicted = (task.L - 1) * std::exp(-beta);
  TaskSampler sampler(task, 31);
  double worst_error = 0, min_bos = 1;
  // Content at +1 everywhere is the worst case (error i / (e^beta + i) in the
  // content and flag coordinates at i = L-1); put it in with the trigger at 1.
  Matrix<double> ones = Matrix<double>::Ones(task.L - 1, task.content_dim());
  std::vector<Sample> probes{Sample{1, make_input<double>(task, 1, ones)}};
  for (int s = 0; s < 200; ++s) probes.push_back(sampler.next());
  for (const Sample& s : probes) {
    const auto r = forward(m, s.X);
    const auto e = linf_error<double>(r.output, make_target(s.X, s.trigger, TargetKind::kPlain));
    worst_error = std::max(worst_error, e.value);
    for (int i = 1; i < task.L; ++i) {
      if (i != s.trigger) min_bos = std::min(min_bos, r.attention[0][0](i, 0));
    }
  }
  // Closed form (src/constructions.h): row i puts e^beta / (e^beta + i) on
  // BOS whatever the content, and errs by i / (e^beta + i) at content +1;
  // both extremes are at i = L-1 (a non-trigger row here).
  const double exact = (task.L - 1) / (std::exp(beta) + (task.L - 1));
  // Rounding: the softmax sum 1 + (L-1) e^-beta adds L-1 terms of 9e-14 to 1
  // one at a time, each rounded to the spacing 2^-52 of doubles just above 1
  // (error <= 2^-53 per addition, absolute); so a_{L-1,0} and each weight
  // carry about (L-1) 2^-53 = 1.7e-15, relative. The error, a sum of L-1
  // weights, adds L-1 more roundings: 2 (L-1) + 2 = 32 roundings of relative
  // 2^-53, 3.6e-15; kErrorTolerance allows 3 times that.
  const double kRoundings = 2 * (task.L - 1) + 2;
  const double kErrorTolerance = 3 * kRoundings * 0x1p-53;
  CHECK(std::abs(worst_error - exact) <= kErrorTolerance * exact);
  // 1 - a_{L-1,0} inherits the absolute error of a (L-1 additions, the
  // division, the subtraction: (L+1) 2^-53 = 1.9e-15), 1e-3 relative to the
  // tiny 1 - a = 1.4e-12, so this one is compared absolutely.
  const double kNearOneTolerance = (task.L + 1) * 0x1p-53;
  CHECK(std::abs((1.0 - min_bos) - exact) <= kNearOneTolerance);
  // and (L-1) e^-beta bounds both (exact is below it by a relative
  // (L-1) e^-beta = 1.4e-12, far above the rounding)
  CHECK(worst_error < predicted);
  CHECK(1.0 - min_bos <= predicted);
}

TEST_CASE("the ReLU construction is exact at a rational point") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<Rational> m = relu_construction<Rational>(task.n);
  Matrix<Rational> C(3, 2);
  C << Rational(1, 3), Rational(-2, 7), Rational(5, 11), Rational(1), Rational(-1), Rational(0);
  for (int j = 1; j < task.L; ++j) {
    const Matrix<Rational> X = make_input(task, j, C);
    const auto r = forward(m, X);
    CHECK(r.output == make_target(X, j, TargetKind::kPlain));
    CHECK(r.attention[0][0].col(0).isZero());
  }
}

TEST_CASE("softmax in rationals is a clear run-time error") {
  const Model<Rational> m = sink_family<Rational>(5, Rational(3));
  const Matrix<Rational> X = make_input<Rational>(Task{5, 4}, 1, Matrix<Rational>::Zero(3, 2));
  CHECK_THROWS_AS(forward(m, X), std::domain_error);
}

TEST_CASE("an input of the wrong width is rejected") {
  const Model<double> m = sink_family<double>(5, 3.0);
  CHECK_THROWS_AS(forward<double>(m, Matrix<double>::Zero(4, 6)), std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert
