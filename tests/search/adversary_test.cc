// SPDX-License-Identifier: MIT
#include "search/adversary.h"

#include <doctest/doctest.h>

#include <cmath>

#include "src/constructions.h"
#include "src/forward.h"
#include "tests/test_util.h"
#include "tests/thread_rank_group.h"

namespace sinkcert::search {
namespace {

using testing::for_each_content_vertex;
using testing::near;
using testing::random_model;

// The reverse-pass gradient of a refined term vs forward-mode Jets of
// forward(): both are exact derivatives of the same double computation,
// differing only by rounding of O(L n) terms of size O(1).
constexpr double kGradientAgreement = 1e-10;
// The adversary's value at a vertex vs the same vertex evaluated directly:
// identical arithmetic up to the sin/asin round trip of +-1 (a few ulps).
constexpr double kVertexValue = 1e-12;

using Jet = ceres::Jet<double, 1>;

// phi and dphi/dC of a refined term by one forward-mode Jet pass per
// content entry, through forward() and make_target().
double jet_term(const Model<double>& m, const Task& task, const RefinedTerm& t,
                const Matrix<double>& C, Matrix<double>& grad) {
  const Model<Jet> mj = m.cast<Jet>();
  grad.resize(C.rows(), C.cols());
  double phi = 0;
  for (int k = 0; k < C.rows(); ++k) {
    for (int c = 0; c < C.cols(); ++c) {
      Matrix<Jet> CJ = C.unaryExpr([](double x) { return Jet(x); });
      CJ(k, c).v[0] = 1.0;
      const Matrix<Jet> X = make_input<Jet>(task, t.trigger, CJ);
      const auto r = forward(mj, X, true);
      Jet value;
      if (t.kind == TermKind::kBosMass) {
        value = r.attention[t.layer][t.coordinate](t.position, 0);
      } else {
        const Matrix<Jet> Y = make_target(X, t.trigger, target_kind_of(m.kind));
        value = Jet(t.sign) * (r.output(t.position, t.coordinate) - Y(t.position, t.coordinate));
      }
      phi = value.a;
      grad(k, c) = value.v[0];
    }
  }
  return phi;
}

TEST_CASE("the refined term's gradient agrees with Jets: every attention kind and model kind") {
  const Task task{6, 5, TriggerRange::kPaper};
  for (AttentionKind kind :
       {AttentionKind::kSoftmax, AttentionKind::kRelu, AttentionKind::kReluCountAll,
        AttentionKind::kSoftmaxOffByOne, AttentionKind::kSigmoid}) {
    for (ModelKind mk : {ModelKind::kSingleLayer, ModelKind::kResidual}) {
      CAPTURE(to_string(kind));
      CAPTURE(to_string(mk));
      const Model<double> m =
          random_model(task.n, kind, 0.7, 3, mk == ModelKind::kResidual ? 2 : 1, 2, mk);
      TaskSampler sampler(task, 5);
      const Sample s = sampler.next();
      const Matrix<double> C = content_of(task, s.X);
      for (TermKind term_kind : {TermKind::kError, TermKind::kBosMass}) {
        // the trigger row (target term) and a row after it
        for (int position : {s.trigger, s.trigger == 3 ? 4 : 3})
          for (int layer = 0; layer < m.num_layers(); ++layer) {
            RefinedTerm t;
            t.kind = term_kind;
            t.trigger = s.trigger;
            t.position = position;
            t.coordinate = term_kind == TermKind::kError ? kFirstContent + 1 : 1;
            t.layer = layer;
            t.sign = -1;
            Matrix<double> gv, gj;
            const double vv = term_value_and_gradient(m, task, t, C, &gv);
            const double vj = jet_term(m, task, t, C, gj);
            CHECK(near(vv, vj, kGradientAgreement));
            int bad = 0;
            for (int k = 0; k < gv.rows(); ++k)
              for (int c = 0; c < gv.cols(); ++c)
                bad += !near(gv(k, c), gj(k, c), kGradientAgreement);
            CHECK(bad == 0);
            // without a gradient: the same value
            CHECK(term_value_and_gradient(m, task, t, C, nullptr) == vv);
          }
      }
    }
  }
}

// Scores that read the flags only (the sink family's A) make every output
// affine in the content, so the worst case is a vertex: enumerating all
// 2^((L-1)(n-3)) vertices for every trigger gives it independently.
TEST_CASE("the adversary finds the enumerated worst vertex of an affine-in-content model") {
  const Task task{6, 5, TriggerRange::kPaper};
  Model<double> m = sink_family<double>(task.n, 1.5);
  m.layers[0][0].M = random_model(task.n, AttentionKind::kSoftmax, 1.0, 17).layers[0][0].M;
  double worst = 0;
  for_each_content_vertex(task, [&](int j, const Matrix<double>& C) {
    worst = std::max(worst, score_error(m, task, j, C).value);
  });
  AdversaryOptions o;
  o.seed = 1;
  const AdversaryResult r = maximize_error(m, task, o);
  CHECK(r.evidence.label() == "SEARCH(lower bound)");
  CHECK(near(r.best.value, worst, kVertexValue));
  // the witness attains the value it reports
  CHECK(near(score_error(m, task, r.best.trigger, r.best.content).value, r.best.value, 0));
  MESSAGE("enumerated worst " << worst << ", adversary " << r.best.value);
}

TEST_CASE("sink family: worst error and smallest BOS mass in closed form") {
  const Task task{7, 8, TriggerRange::kPaper};
  const double beta = 3.0, L1 = task.L - 1;
  const Model<double> m = sink_family<double>(task.n, beta);
  // worst error (L-1) / (e^beta + L-1) at row L-1 (any j < L-1);
  // smallest BOS mass e^beta / (e^beta + L-1), same row.
  const double e = std::exp(beta);
  const AdversaryResult err = maximize_error(m, task, {});
  CHECK(near(err.best.value, L1 / (e + L1), kVertexValue));
  CHECK(err.best.position == task.L - 1);
  const AdversaryResult bos = minimize_bos_mass(m, task, {});
  CHECK(bos.evidence.label() == "SEARCH(upper bound)");
  CHECK(near(bos.best.value, e / (e + L1), kVertexValue));
}

// Content-dependent scores: interior maxima exist. The adversary must do at
// least as well as dense random sampling, and be reproducible from its seed.
TEST_CASE("the adversary beats random sampling and is deterministic") {
  const Task task{6, 6, TriggerRange::kReferenceCode};
  const Model<double> m = random_model(task.n, AttentionKind::kSoftmax, 1.0, 23);
  TaskSampler sampler(task, 99);
  double sampled = 0, sampled_bos = 2;
  for (int s = 0; s < 3000; ++s) {
    const Sample x = sampler.next();
    const Matrix<double> C = x.X.block(1, kFirstContent, task.L - 1, task.content_dim());
    sampled = std::max(sampled, score_error(m, task, x.trigger, C).value);
  }
  AdversaryOptions o;
  o.seed = 4;
  const AdversaryResult a = maximize_error(m, task, o);
  const AdversaryResult b = maximize_error(m, task, o);
  CHECK(a.best.value >= sampled);
  CHECK(a.best.value == b.best.value);
  CHECK(a.best.trigger >= 2);
  CHECK(a.per_trigger.size() == task.trigger_positions().size());
  const AdversaryResult lo = minimize_bos_mass(m, task, o);
  TaskSampler sampler2(task, 98);
  for (int s = 0; s < 300; ++s) {
    const Sample x = sampler2.next();
    for (int i = 1; i < task.L; ++i) {
      if (i == x.trigger) continue;
      sampled_bos = std::min(sampled_bos, forward(m, x.X).attention[0][0](i, 0));
    }
  }
  CHECK(lo.best.value <= sampled_bos);
  MESSAGE("sampled " << sampled << " adversary " << a.best.value << "; BOS sampled " << sampled_bos
                     << " adversary " << lo.best.value);
}

TEST_CASE("first-digit disagreement: the rule and its false cases") {
  CHECK(differ_in_first_digit(3.33e-16, 6.37e-17));
  CHECK(differ_in_first_digit(1e-20, 0.0));
  CHECK(differ_in_first_digit(std::nan(""), 1.0));
  CHECK_FALSE(differ_in_first_digit(0.99999, 1.00001));
  CHECK_FALSE(differ_in_first_digit(6.5e-17, 6.49e-17));
  CHECK_FALSE(differ_in_first_digit(2.0e-11, 2.0e-11));
}

// The sink family at beta = 40, n = L = 16 (constructions.h): E = 15 / (e^40
// + 15) = 6.37e-17 at row 15 (trigger j < 15, content +-1), and the smallest
// BOS mass is e^40 / (e^40 + 15). In double the trigger row's a_jk - 1/j is
// rounding noise of about 2^-53 > E, so the search's double value lies ABOVE
// the true worst case: a wrong lower bound. The certified value must not.
TEST_CASE("sink family at beta = 40: the certified SEARCH lower bound is below the true E") {
  const Task task{16, 16, TriggerRange::kPaper};
  const double beta = 40.0;
  const Model<double> m = sink_family<double>(task.n, beta);
  const AdversaryOptions o;  // seed 0, every trigger position
  const AdversaryResult r = maximize_error(m, task, o);
  PrecisionScope high(1024);
  const Mpfr truth = Mpfr(15) / (bmp::exp(Mpfr(beta)) + 15);
  MESSAGE("double " << r.best.value << ", certified " << r.best.certified << " at "
                    << r.best.certified_bits << " bits, true " << truth.convert_to<double>());
  // the defect: the double value is above the true worst case
  CHECK(Mpfr(r.best.value) > truth);
  // the fix: certified <= E, and it is flagged as differing in the first digit
  CHECK(Mpfr(r.best.certified) <= truth);
  CHECK(r.best.certified > 0);
  CHECK(r.best.double_disagrees);
  CHECK(r.best.certified_bits >= kCertifyStartBits);
  for (const Witness& w : r.per_trigger) CHECK(Mpfr(w.certified) <= truth);
  // SEARCH(upper bound) on the BOS mass: the certified value is above the
  // true smallest mass (double rounds it to 1, which happens to be safe)
  const AdversaryResult b = minimize_bos_mass(m, task, o);
  const Mpfr mass = bmp::exp(Mpfr(beta)) / (bmp::exp(Mpfr(beta)) + 15);
  CHECK(Mpfr(b.best.certified) >= mass);
  CHECK(Mpfr(b.best.certified) <= Mpfr(1));
}

// certify_witness fed a witness whose recorded value is false: the certified
// value is recomputed from the input, not copied.
TEST_CASE("certify_witness recomputes the value at the witness") {
  const Task task{7, 8, TriggerRange::kPaper};
  const double beta = 3.0;
  const Model<double> m = sink_family<double>(task.n, beta);
  Witness w = score_error(m, task, 2, Matrix<double>::Constant(task.L - 1, task.content_dim(), 1));
  w.value = 0.5;  // a wrong double value
  certify_witness(m, task, w);
  const double e = std::exp(beta), truth = 7 / (e + 7);
  // the MPFI lower end, rounded down: within rounding of the true value
  constexpr double kRounding = 1e-15;
  CHECK(w.certified <= truth);
  CHECK(w.certified >= truth * (1 - kRounding));
  CHECK(w.double_disagrees);
}

// A residual model with a known worst case: layer 0 is the sink family's
// head, layer 1 has A = M = 0. Then f(X)_i - y_i = o^0_i for i != j and
// o^0_j - (1/j) sum_{k<=j} x_k at the trigger, the single-layer sink
// family's error, so E = (L-1) / (e^beta + L-1) at row L-1; layer 1's
// scores are all 0, its weights uniform, so the smallest BOS mass over
// both layers is layer 1's 1/L at row L-1 (below layer 0's
// e^beta / (e^beta + L-1)). The residual path (reverse pass through two
// layers) must find both.
TEST_CASE("the adversary over 2 ranks: the same witnesses, certified values and counts") {
  const Task task{6, 5, TriggerRange::kReferenceCode};
  const Model<double> m = random_model(task.n, AttentionKind::kSoftmax, 1.0, 31);
  AdversaryOptions o;
  o.seed = 7;
  o.warm_starts.emplace_back(2, Matrix<double>::Constant(task.L - 1, task.content_dim(), 0.5));
  for (const bool bos : {false, true}) {
    const AdversaryResult want = bos ? minimize_bos_mass(m, task, o) : maximize_error(m, task, o);
    std::vector<AdversaryResult> got(2);
    test::run_on_ranks(2, [&](const RankGroup& group) {
      AdversaryOptions ro = o;
      ro.ranks = &group;
      got[group.rank()] = bos ? minimize_bos_mass(m, task, ro) : maximize_error(m, task, ro);
    });
    for (const AdversaryResult& g : got) {
      CHECK(g.evaluations == want.evaluations);
      CHECK(g.refinements == want.refinements);
      REQUIRE(g.per_trigger.size() == want.per_trigger.size());
      for (std::size_t k = 0; k < want.per_trigger.size(); ++k) {
        const Witness &a = g.per_trigger[k], &b = want.per_trigger[k];
        CHECK(a.trigger == b.trigger);
        CHECK(a.value == b.value);
        CHECK(a.certified == b.certified);
        CHECK(a.certified_bits == b.certified_bits);
        CHECK(a.position == b.position);
        CHECK(a.content == b.content);
      }
      CHECK(g.best.certified == want.best.certified);
    }
  }
}

TEST_CASE("a two-layer residual model: the known worst error and smallest BOS mass") {
  const Task task{7, 8, TriggerRange::kPaper};
  const double beta = 3.0, L1 = task.L - 1, e = std::exp(beta);
  Model<double> m = sink_family<double>(task.n, beta);
  m.kind = ModelKind::kResidual;
  const Matrix<double> zero = Matrix<double>::Zero(task.n, task.n);
  m.layers.push_back({Head<double>{zero, zero}});
  const AdversaryResult r = maximize_error(m, task, {});
  CHECK(near(r.best.value, L1 / (e + L1), kVertexValue));
  CHECK(r.best.position == task.L - 1);
  CHECK(near(score_error(m, task, r.best.trigger, r.best.content).value, r.best.value, 0));
  const AdversaryResult b = minimize_bos_mass(m, task, {});
  CHECK(near(b.best.value, 1.0 / task.L, kVertexValue));
  CHECK(b.best.layer == 1);
  CHECK(b.best.position == task.L - 1);
}

}  // namespace
}  // namespace sinkcert::search
