// SPDX-License-Identifier: MIT
//
// The reverse-mode derivative of forward() against forward-mode Jets of
// forward() itself, for
//   phi = sum_{i,d} dY_{i,d} f(X)_{i,d} + sum_{l,h,i,k<=i} Z^{l,h}_{ik} a^{l,h}_{ik}
// with random cotangents dY and Z: dphi/dX, dphi/dA and dphi/dM (and the
// gate dphi/dG of gated attention) of every head, every attention kind,
// single-layer (2 heads) and residual (2 layers x 2 heads), at points where
// ReLU (and softpick) scores are exactly 0; and the MPFI reverse pass over a
// box enclosing the double one at points of the box.
#include "src/forward_vjp.h"

#include <doctest/doctest.h>

#include <random>

#include "src/forward.h"
#include "src/parameter_layout.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

using testing::near;
using testing::random_model;

// Jet and reverse mode compute the same derivative of the same double
// function in different orders: O(L n) rounded terms of size O(1) per
// entry, far below this.
constexpr double kJetAgreement = 1e-12;
// Double points against an MPFI enclosure: the double VJP is rounded by
// O(L n) ulps of O(1) terms, far below this slack.
constexpr double kDoubleRounding = 1e-12;

constexpr int kChunk = 8;
using Jet = ceres::Jet<double, kChunk>;

const AttentionKind kKinds[] = {AttentionKind::kSoftmax,      AttentionKind::kRelu,
                                AttentionKind::kReluCountAll, AttentionKind::kSoftmaxOffByOne,
                                AttentionKind::kSigmoid,      AttentionKind::kSoftpick,
                                AttentionKind::kGated};
// The kinds head_row_output_jacobian covers (all but gated, whose gate it
// does not see).
const AttentionKind kJacobianKinds[] = {
    AttentionKind::kSoftmax,         AttentionKind::kRelu,    AttentionKind::kReluCountAll,
    AttentionKind::kSoftmaxOffByOne, AttentionKind::kSigmoid, AttentionKind::kSoftpick};

// phi in any scalar type, from forward().
template <class T>
T phi_of(const Model<T>& model, const Matrix<T>& X, const Matrix<double>& dY,
         const std::vector<std::vector<Matrix<double>>>& Z) {
  const auto r = forward(model, X, true);
  T phi(0);
  for (int i = 0; i < dY.rows(); ++i) {
    for (int d = 0; d < dY.cols(); ++d) phi += T(dY(i, d)) * r.output(i, d);
  }
  for (std::size_t l = 0; l < Z.size(); ++l) {
    for (std::size_t h = 0; h < Z[l].size(); ++h) {
      for (int i = 0; i < dY.rows(); ++i) {
        for (int k = 0; k <= i; ++k) phi += T(Z[l][h](i, k)) * r.attention[l][h](i, k);
      }
    }
  }
  return phi;
}

// Pointers to every differentiated entry: X, then A, M (and the gate G of
// gated attention) of every head.
std::vector<Jet*> variables(Model<Jet>& m, Matrix<Jet>& X) {
  std::vector<Jet*> v;
  for (int t = 0; t < X.size(); ++t) v.push_back(X.data() + t);
  for (auto& layer : m.layers) {
    for (auto& head : layer) {
      for (int t = 0; t < head.A.size(); ++t) v.push_back(head.A.data() + t);
      for (int t = 0; t < head.M.size(); ++t) v.push_back(head.M.data() + t);
      for (int t = 0; t < head.G.size(); ++t) v.push_back(head.G.data() + t);
    }
  }
  return v;
}

// dphi by forward-mode Jets, kChunk directions per pass, in the order of
// variables().
std::vector<double> jet_gradient(const Model<double>& model, const Matrix<double>& X,
                                 const Matrix<double>& dY,
                                 const std::vector<std::vector<Matrix<double>>>& Z) {
  Model<Jet> mj = model.cast<Jet>();
  Matrix<Jet> XJ = X.unaryExpr([](double x) { return Jet(x); });
  const std::vector<Jet*> vars = variables(mj, XJ);
  std::vector<double> grad(vars.size());
  for (std::size_t first = 0; first < vars.size(); first += kChunk) {
    const std::size_t end = std::min(vars.size(), first + kChunk);
    for (std::size_t p = first; p < end; ++p) vars[p]->v[p - first] = 1.0;
    const Jet phi = phi_of(mj, XJ, dY, Z);
    for (std::size_t p = first; p < end; ++p) {
      grad[p] = phi.v[p - first];
      vars[p]->v[p - first] = 0.0;
    }
  }
  return grad;
}

// The reverse pass flattened in the order of variables().
std::vector<double> vjp_gradient(const Model<double>& model, const Matrix<double>& X,
                                 const Matrix<double>& dY,
                                 const std::vector<std::vector<Matrix<double>>>& Z) {
  const ForwardTape<double> tape = forward_tape(model, X);
  const ForwardGradient<double> g = forward_vjp(model, tape, dY, &Z);
  std::vector<double> out(g.dX.data(), g.dX.data() + g.dX.size());
  for (const auto& layer : g.dheads) {
    for (const auto& head : layer) {
      out.insert(out.end(), head.A.data(), head.A.data() + head.A.size());
      out.insert(out.end(), head.M.data(), head.M.data() + head.M.size());
      out.insert(out.end(), head.G.data(), head.G.data() + head.G.size());
    }
  }
  return out;
}

struct Cotangents {
  Matrix<double> dY;
  std::vector<std::vector<Matrix<double>>> Z;
};

Cotangents random_cotangents(const Model<double>& m, int L, std::uint64_t seed) {
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Cotangents c;
  c.dY = Matrix<double>(L, m.n);
  for (int t = 0; t < c.dY.size(); ++t) c.dY.data()[t] = normal(eng);
  for (int l = 0; l < m.num_layers(); ++l) {
    c.Z.emplace_back();
    for (int h = 0; h < m.num_heads(); ++h) {
      Matrix<double> z = Matrix<double>::Zero(L, L);
      for (int i = 0; i < L; ++i)
        for (int k = 0; k <= i; ++k) z(i, k) = normal(eng);
      c.Z.back().push_back(z);
    }
  }
  return c;
}

// A model whose layer-0 scores against the BOS key are exactly 0: column 0
// of every layer-0 A is zero, so s_i0 = x_i^T A e_0 = 0 for every row.
Model<double> with_zero_bos_scores(Model<double> m) {
  for (auto& head : m.layers[0]) head.A.col(0).setZero();
  return m;
}

void check_against_jets(const Model<double>& m, const Matrix<double>& X, std::uint64_t seed) {
  const Cotangents c = random_cotangents(m, static_cast<int>(X.rows()), seed);
  const std::vector<double> jet = jet_gradient(m, X, c.dY, c.Z);
  const std::vector<double> vjp = vjp_gradient(m, X, c.dY, c.Z);
  REQUIRE(jet.size() == vjp.size());
  int bad = 0;
  for (std::size_t p = 0; p < jet.size(); ++p) bad += !near(jet[p], vjp[p], kJetAgreement);
  CHECK(bad == 0);
}

TEST_CASE("the reverse pass matches Jets: every attention kind, single-layer and residual") {
  const Task task{5, 4, TriggerRange::kPaper};
  TaskSampler sampler(task, 7);
  for (AttentionKind kind : kKinds) {
    CAPTURE(to_string(kind));
    const Sample s = sampler.next();
    // single-layer, 2 heads
    check_against_jets(random_model(task.n, kind, 0.7, 11, 1, 2), s.X, 1);
    // residual, 2 layers x 2 heads
    check_against_jets(random_model(task.n, kind, 0.5, 12, 2, 2, ModelKind::kResidual), s.X, 2);
    // a general input (not a task sequence): every entry differentiated
    const Matrix<double> G = random_model(task.n, kind, 1.0, 13).layers[0][0].A.topRows(task.L);
    check_against_jets(random_model(task.n, kind, 0.5, 14, 2, 2, ModelKind::kResidual), G, 3);
  }
}

// forward_vjp_batch flattened like vjp_gradient, cotangent c.
std::vector<double> batch_gradient(const ForwardGradient<double>& g) {
  std::vector<double> out(g.dX.data(), g.dX.data() + g.dX.size());
  for (const auto& layer : g.dheads) {
    for (const auto& head : layer) {
      out.insert(out.end(), head.A.data(), head.A.data() + head.A.size());
      out.insert(out.end(), head.M.data(), head.M.data() + head.M.size());
    }
  }
  return out;
}

// Entries of the batched gradient that differ from the Jets' of cotangent dY.
int batch_mismatches(const Model<double>& m, const Matrix<double>& X, const Matrix<double>& dY,
                     const ForwardGradient<double>& g) {
  const std::vector<double> jet = jet_gradient(m, X, dY, {});
  const std::vector<double> batch = batch_gradient(g);
  REQUIRE(jet.size() == batch.size());
  int bad = 0;
  for (std::size_t p = 0; p < jet.size(); ++p) bad += !near(jet[p], batch[p], kJetAgreement);
  return bad;
}

TEST_CASE("the batched reverse pass matches Jets for every cotangent, and tells a perturbed one") {
  const Task task{5, 4, TriggerRange::kPaper};
  TaskSampler sampler(task, 8);
  constexpr int kCotangents = 3;
  for (AttentionKind kind : kJacobianKinds) {
    CAPTURE(to_string(kind));
    const Sample s = sampler.next();
    for (const Model<double>& m :
         {random_model(task.n, kind, 0.7, 21, 1, 2),
          random_model(task.n, kind, 0.5, 22, 2, 2, ModelKind::kResidual)}) {
      std::vector<Matrix<double>> dY;
      for (int c = 0; c < kCotangents; ++c) {
        dY.push_back(random_cotangents(m, task.L, 30 + c).dY);
      }
      // a unit cotangent on one output row (a Jacobian row), zero elsewhere
      dY[0].setZero();
      dY[0](task.L - 1, 2) = 1.0;
      const ForwardTape<double> tape = forward_tape(m, s.X);
      const std::vector<ForwardGradient<double>> g = forward_vjp_batch(m, tape, dY);
      REQUIRE(static_cast<int>(g.size()) == kCotangents);
      for (int c = 0; c < kCotangents; ++c) CHECK(batch_mismatches(m, s.X, dY[c], g[c]) == 0);
      // the pass reads each cotangent: a perturbed one no longer matches
      Matrix<double> perturbed = dY[1];
      perturbed(1, 0) += 0.5;
      CHECK(batch_mismatches(m, s.X, perturbed, g[1]) > 0);
    }
  }
  const Model<double> gated = random_model(task.n, AttentionKind::kGated, 0.5, 23);
  const ForwardTape<double> tape = forward_tape(gated, sampler.next().X);
  CHECK_THROWS_AS(forward_vjp_batch(gated, tape, {Matrix<double>::Zero(task.L, task.n)}),
                  std::invalid_argument);
}

// (softpick: relu(exp(s) - 1) has derivative 0 and |exp(s) - 1| derivative -1
// at s = 0, the left derivatives.)
TEST_CASE("at a ReLU score of exactly 0 the derivative is 0, as Jets give") {
  const Task task{5, 4, TriggerRange::kPaper};
  TaskSampler sampler(task, 8);
  for (AttentionKind kind :
       {AttentionKind::kRelu, AttentionKind::kReluCountAll, AttentionKind::kSoftpick}) {
    CAPTURE(to_string(kind));
    const Sample s = sampler.next();
    for (ModelKind mk : {ModelKind::kSingleLayer, ModelKind::kResidual}) {
      const Model<double> m = with_zero_bos_scores(random_model(task.n, kind, 0.7, 21, 2, 2, mk));
      // the point has the zero scores it is meant to have
      const ForwardTape<double> tape = forward_tape(m, s.X);
      for (int i = 0; i < task.L; ++i) REQUIRE(tape.rows[0][0][i].s[0] == 0.0);
      check_against_jets(m, s.X, 4);
    }
  }
}

TEST_CASE("a cotangent on one row: forward_tape(only_row) gives the same derivative") {
  const Task task{6, 5, TriggerRange::kPaper};
  TaskSampler sampler(task, 9);
  const Sample s = sampler.next();
  for (ModelKind mk : {ModelKind::kSingleLayer, ModelKind::kResidual}) {
    const Model<double> m = random_model(task.n, AttentionKind::kSoftmax, 0.7, 31, 2, 2, mk);
    Matrix<double> dY = Matrix<double>::Zero(task.L, task.n);
    dY(3, 2) = 1.0;
    const auto full = forward_vjp(m, forward_tape(m, s.X), dY);
    const ForwardTape<double> one = forward_tape(m, s.X, 3);
    CHECK(one.output(3, 2) == forward(m, s.X).output(3, 2));
    const auto part = forward_vjp(m, one, dY);
    CHECK((part.dX - full.dX).cwiseAbs().maxCoeff() == 0.0);
    // a cotangent on a row the tape did not compute is refused
    dY(4, 0) = 1.0;
    CHECK_THROWS_AS(forward_vjp(m, one, dY), std::invalid_argument);
  }
}

TEST_CASE("the output Jacobian of a row equals one reverse pass per unit cotangent") {
  const Task task{6, 5, TriggerRange::kPaper};
  TaskSampler sampler(task, 11);
  const Sample s = sampler.next();
  {
    // gated: refused (the Jacobian would miss the gate)
    const Model<double> m = random_model(task.n, AttentionKind::kGated, 0.7, 51);
    const HeadRow<double> row = head_row_forward(AttentionKind::kGated, m.layers[0][0], s.X, 3);
    CHECK_THROWS_AS(head_row_output_jacobian(AttentionKind::kGated, m.layers[0][0].M, s.X, row),
                    std::invalid_argument);
  }
  for (AttentionKind kind : kJacobianKinds) {
    CAPTURE(to_string(kind));
    const Model<double> m = random_model(task.n, kind, 0.7, 51);
    const Head<double>& head = m.layers[0][0];
    const HeadRow<double> row = head_row_forward(kind, head, s.X, 3);
    const Matrix<double> W = head_row_output_jacobian(kind, head.M, s.X, row);
    int bad = 0;
    for (int d = 0; d < task.n; ++d) {
      Vector<double> e = Vector<double>::Zero(task.n);
      e(d) = 1.0;
      Matrix<double> dA = Matrix<double>::Zero(task.n, task.n);
      head_row_vjp(kind, head, s.X, row, &e, nullptr, nullptr, &dA, nullptr);
      // dA = x_i w_d^T
      const Matrix<double> expected = s.X.row(3).transpose() * W.row(d);
      for (int t = 0; t < dA.size(); ++t)
        bad += !near(dA.data()[t], expected.data()[t], kJetAgreement);
    }
    CHECK(bad == 0);
  }
}

// The caller's shortcuts agree with the general pass: the head output as the
// softmax weighted mean, A and M read in place from row-major blocks, the
// closed-form BOS-mass pass, and the applied value sum_k a_k z_k = phi.
TEST_CASE("row shortcuts: weighted mean, row-major views, BOS closed form, applied value") {
  const Task task{6, 5, TriggerRange::kPaper};
  TaskSampler sampler(task, 12);
  const Sample s = sampler.next();
  const int i = 4;
  for (AttentionKind kind : kJacobianKinds) {
    CAPTURE(to_string(kind));
    const Model<double> m = random_model(task.n, kind, 0.7, 52);
    const Head<double>& head = m.layers[0][0];
    std::vector<double> a_block(task.n * task.n), m_block(task.n * task.n);
    pack_row_major(head.A, a_block.data());
    pack_row_major(head.M, m_block.data());
    const HeadRow<double> row = head_row_forward(kind, head, s.X, i);
    const HeadRow<double> viewed =
        head_row_forward(kind, row_major_view(a_block.data(), task.n), s.X, i);
    for (int k = 0; k <= i; ++k) CHECK(near(viewed.a[k], row.a[k], kJetAgreement));
    const Vector<double> out = head.M * row.mixed;
    const Matrix<double> W = head_row_output_jacobian(kind, head.M, s.X, row);
    const Matrix<double> W_mean =
        head_row_output_jacobian(kind, row_major_view(m_block.data(), task.n), s.X, row, &out);
    for (int t = 0; t < W.size(); ++t) CHECK(near(W_mean.data()[t], W.data()[t], kJetAgreement));
    // applied value of the cotangent e_d on o_i: o_i[d]
    for (int d = 0; d < task.n; ++d) {
      Vector<double> e = Vector<double>::Zero(task.n);
      e(d) = 1.0;
      const double applied =
          head_row_vjp(kind, head, s.X, row, &e, nullptr, nullptr, nullptr, nullptr);
      CHECK(near(applied, out(d), kJetAgreement));
    }
    // phi = a_i0: the closed form against the general pass
    std::vector<double> z(i + 1, 0.0);
    z[0] = 1.0;
    Matrix<double> general = Matrix<double>::Zero(task.n, task.n);
    head_row_vjp(kind, head, s.X, row, nullptr, z.data(), nullptr, &general, nullptr);
    Matrix<double> closed = Matrix<double>::Zero(task.n, task.n);
    if (kind == AttentionKind::kSoftmax || kind == AttentionKind::kSoftmaxOffByOne) {
      bos_mass_row_vjp(kind, s.X, row, closed);
      for (int t = 0; t < closed.size(); ++t) {
        CHECK(near(closed.data()[t], general.data()[t], kJetAgreement));
      }
      // a different phi (a_i1) must not agree with the closed form of a_i0
      std::vector<double> z1(i + 1, 0.0);
      z1[1] = 1.0;
      Matrix<double> other = Matrix<double>::Zero(task.n, task.n);
      head_row_vjp(kind, head, s.X, row, nullptr, z1.data(), nullptr, &other, nullptr);
      CHECK_FALSE((other - closed).cwiseAbs().maxCoeff() < kJetAgreement);
    } else {
      CHECK_THROWS_AS(bos_mass_row_vjp(kind, s.X, row, closed), std::invalid_argument);
    }
  }
}

// The MPFI reverse pass over a box of inputs encloses the derivative at every
// point of the box; ReLU scores that straddle 0 over the box need the hull
// [0, 1] of the indicator.
TEST_CASE("MPFI over a box encloses the double reverse pass at points of the box") {
  const Task task{5, 4, TriggerRange::kPaper};
  constexpr double kRadius = 1e-3;
  TaskSampler sampler(task, 10);
  for (AttentionKind kind : kKinds) {
    CAPTURE(to_string(kind));
    Model<double> m = random_model(task.n, kind, 0.7, 41, 1, 2);
    // s_i0 = (content coordinate 0 of x_i) + ..., straddling 0 over the box
    for (auto& head : m.layers[0]) {
      head.A.col(0).setZero();
      head.A(kFirstContent, 0) = 1.0;
    }
    Sample s = sampler.next();
    for (int i = 1; i < task.L; ++i) s.X(i, kFirstContent) = 0.0;
    const Cotangents c = random_cotangents(m, task.L, 5);
    PrecisionScope scope(128);
    Matrix<Mpfi> box(task.L, task.n);
    for (int i = 0; i < task.L; ++i) {
      for (int d = 0; d < task.n; ++d) {
        const bool content = i >= 1 && d >= kFirstContent && d < ordinary_flag(task.n);
        const double x = s.X(i, d);
        box(i, d) = content ? Mpfi(Mpfr(x - kRadius), Mpfr(x + kRadius)) : Mpfi(x);
      }
    }
    const Model<Mpfi> mi = m.cast<Mpfi>();
    std::vector<std::vector<Matrix<Mpfi>>> Zi;
    for (const auto& layer : c.Z) {
      Zi.emplace_back();
      for (const auto& z : layer) Zi.back().push_back(matrix_cast<Mpfi>(z));
    }
    const auto enc = forward_vjp(mi, forward_tape(mi, box), matrix_cast<Mpfi>(c.dY), &Zi);
    std::mt19937_64 eng(6);
    std::uniform_real_distribution<double> u(-kRadius, kRadius);
    int outside = 0;
    for (int p = 0; p < 20; ++p) {
      Matrix<double> X = s.X;
      for (int i = 1; i < task.L; ++i) {
        for (int d = kFirstContent; d < ordinary_flag(task.n); ++d) X(i, d) += u(eng);
      }
      // content coordinate 0 is drawn around 0: points on both sides of the
      // ReLU kink of the BOS scores
      const auto g = forward_vjp(m, forward_tape(m, X), c.dY, &c.Z);
      const auto inside = [](const Mpfi& e, double v) {
        return Mpfr(bmp::lower(e)) - kDoubleRounding <= v &&
               v <= Mpfr(bmp::upper(e)) + kDoubleRounding;
      };
      for (int t = 0; t < g.dX.size(); ++t) outside += !inside(enc.dX.data()[t], g.dX.data()[t]);
      for (int h = 0; h < 2; ++h) {
        for (int t = 0; t < task.n * task.n; ++t) {
          outside += !inside(enc.dheads[0][h].A.data()[t], g.dheads[0][h].A.data()[t]);
          outside += !inside(enc.dheads[0][h].M.data()[t], g.dheads[0][h].M.data()[t]);
        }
        REQUIRE(enc.dheads[0][h].G.size() == g.dheads[0][h].G.size());
        for (int t = 0; t < g.dheads[0][h].G.size(); ++t) {
          outside += !inside(enc.dheads[0][h].G.data()[t], g.dheads[0][h].G.data()[t]);
        }
      }
    }
    CHECK(outside == 0);
  }
}

}  // namespace
}  // namespace sinkcert
