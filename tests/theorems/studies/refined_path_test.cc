// SPDX-License-Identifier: MIT
#include "theorems/studies/refined_path.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "src/constructions.h"
#include "src/forward.h"
#include "src/linf_error.h"
#include "tests/test_util.h"
#include "theorems/reports/precision_report.h"

namespace sinkcert::theorems::studies {
namespace {

// A stand-in for a double search result: the sink family at beta = 25 (loss
// ~ 4e-11, where the double searches stop) with
// every entry of A and M moved by N(0, 1e-6) noise (content-dependent scores,
// M off the identity), as the search's models are.
Model<double> search_like_model() {
  Model<double> m = sink_family<double>(5, 25.0);
  const Model<double> noise = testing::random_model(5, AttentionKind::kSoftmax, 1e-6, 11);
  m.layers[0][0].A += noise.layers[0][0].A;
  m.layers[0][0].M += noise.layers[0][0].M;
  return m;
}

RefinedPathOptions small_options() {
  RefinedPathOptions o;
  o.scales = {1, 2};
  o.bits = 256;
  o.evaluations = 12;
  return o;
}

// The path of small_options() on the search-like model, computed once (it
// takes most of this file's time) and shared by the cases that read it.
const RefinedPath& shared_path() {
  static const RefinedPath path =
      refined_path(search_like_model(), Task{5, 4, TriggerRange::kPaper}, small_options());
  return path;
}

TEST_CASE("the refined path takes a search-like model below 1e-30, certified") {
  const Task task{5, 4, TriggerRange::kPaper};
  const RefinedPath& path = shared_path();
  REQUIRE(path.rows.size() == 2);
  // F: 2 + 14 per trigger and 16 samples; W: 64 vertices per trigger and 64
  CHECK(path.fit_size == 3 * 16 + 16);
  CHECK(path.check_size == 3 * 64 + 64);
  for (const auto& r : path.rows) CHECK(r.cert.reached);
  // the target: certified loss at W below 1e-30 with certified
  // 1 - min BOS below 1e-29 (upper ends of the enclosures)
  const bounds::WitnessCertificate& last = path.rows.back().cert;
  CHECK(bmp::upper(last.loss) < Mpfr(1e-30));
  CHECK(bmp::upper(last.deficit) < Mpfr(1e-29));
  CHECK(bmp::upper(last.loss) < bmp::lower(path.rows.front().cert.loss));
  // the branch and bound over the whole box: sound (its upper end is at or
  // above the certified loss at W, a lower bound on E) and, with the
  // score-difference softmax enclosure, below 1e-30 as well
  const RefinedPathRow& row = path.rows.back();
  REQUIRE(row.bounded);
  CHECK(row.bound.upper >= Mpfr(bmp::lower(last.loss)));
  CHECK(row.bound.upper < Mpfr(1e-30));
  CHECK(row.bound.evidence.label() == "CERTIFIED");
  // An independent check of the enclosure: W holds every vertex, so the
  // 1024-bit MPFR loss of the last model at any vertex lies at or below the
  // certified upper end; at the worst vertex it is inside the enclosure's
  // relative width (6 digits certified).
  PrecisionScope high(1024);
  Mpfr worst(0);
  for (int j : task.trigger_positions()) {
    for (double v : {1.0, -1.0}) {
      const Matrix<Mpfr> X = make_input<Mpfr>(
          task, j, Matrix<Mpfr>::Constant(task.L - 1, task.content_dim(), Mpfr(v)));
      const auto out = forward(path.last, X, false).output;
      const Mpfr e = linf_error(out, make_target(X, j, TargetKind::kPlain)).value;
      if (e > worst) worst = e;
    }
  }
  CHECK(worst <= bmp::upper(last.loss));
  CHECK(worst > 0);
  // The row's weight file denotes exactly the certified model: read back,
  // every entry equals the MPFR entry as a rational.
  const std::string path_file = (std::filesystem::temp_directory_path() /
                                 ("sinkcert_p5_" + std::to_string(::getpid()) + ".weights.json"))
                                    .string();
  write_weight_file(path_file, refined_path_weight_file(row, path, task, "search-like"));
  const Model<Rational> back = to_model<Rational>(read_weight_file(path_file));
  std::filesystem::remove(path_file);
  CHECK(refined_path_file_name(row) ==
        "p5_refined_s" + std::to_string(static_cast<int>(row.scale)) + ".weights.json");
  for (int r = 0; r < task.n; ++r) {
    for (int c = 0; c < task.n; ++c) {
      CHECK(back.layers[0][0].A(r, c) == scalar_cast<Rational>(row.model.layers[0][0].A(r, c)));
      CHECK(back.layers[0][0].M(r, c) == scalar_cast<Rational>(row.model.layers[0][0].M(r, c)));
    }
  }
}

// The projection onto the exact-trigger-row structure: on the projected model
// the trigger row errs only by its BOS leakage, e(X)_j = a_j0 |y_j|, checked
// in 512-bit MPFR at vertices against the attention itself (an independent
// evaluation of the header's identity); the unprojected search-like model
// fails it (its noise is far above its leakage at beta = 25 in the trigger
// row), so the check can fail.
TEST_CASE("the projected model's trigger row errs by its BOS leakage only") {
  const Task task{5, 4, TriggerRange::kPaper};
  PrecisionScope scope(512);
  const Model<Mpfr> noisy = search_like_model().cast<Mpfr>();
  const Model<Mpfr> projected = project_exact_structure(noisy);
  // |e_j - a_j0 max|y_j|| relative to a_j0, on every trigger, content +-1
  const auto worst_excess = [&](const Model<Mpfr>& m) {
    Mpfr worst(0);
    for (int j : task.trigger_positions()) {
      for (double v : {1.0, -1.0}) {
        const Matrix<Mpfr> X = make_input<Mpfr>(
            task, j, Matrix<Mpfr>::Constant(task.L - 1, task.content_dim(), Mpfr(v)));
        const auto out = forward(m, X, true);
        const Matrix<Mpfr> y = make_target(X, j, TargetKind::kPlain);
        const Mpfr a_j0 = out.attention[0][0](j, 0);
        for (int d = 0; d < task.n; ++d) {
          const Mpfr excess = bmp::abs(Mpfr(out.output(j, d) - y(j, d) + a_j0 * y(j, d))) / a_j0;
          if (excess > worst) worst = excess;
        }
      }
    }
    return worst;
  };
  CHECK(worst_excess(projected) < Mpfr(1e-100));
  CHECK(worst_excess(noisy) > Mpfr(1e-3));
  // the entries P fixes, and M = I - e_0 e_0^T
  const Head<Mpfr>& h = projected.layers[0][0];
  CHECK(h.A(1, 2) == 0);
  CHECK(h.A(2, 3) == 0);
  CHECK(h.A(2, 1) == h.A(2, 4));
  CHECK(h.M(0, 0) == 0);
  CHECK(h.M(3, 3) == 1);
  CHECK(h.M(3, 2) == 0);
  // entries P leaves alone: the sink's scores
  CHECK(h.A(4, 0) == noisy.layers[0][0].A(4, 0));
}

TEST_CASE("the exact-structure path certifies E and 1 - min BOS over the whole box") {
  const Task task{5, 4, TriggerRange::kPaper};
  RefinedPathOptions o = small_options();
  o.method = RefineMethod::kExactStructure;
  o.scales = {2};
  o.bound_boxes = 200;
  o.bos_boxes = 200;
  const RefinedPath path = refined_path(search_like_model(), task, o);
  REQUIRE(path.rows.size() == 1);
  const RefinedPathRow& r = path.rows[0];
  CHECK(r.evaluations == 0);
  REQUIRE(r.bounded);
  REQUIRE(r.bos_bounded);
  // the sink family at beta = 50: E and 1 - min BOS ~ 3 e^-50 ~ 6e-22
  CHECK(r.bound.upper < Mpfr(1e-20));
  CHECK(r.bound.upper >= Mpfr(bmp::lower(r.cert.loss)));
  CHECK(r.bos.deficit_upper < Mpfr(1e-20));
  CHECK(r.bos.deficit_upper >= Mpfr(bmp::lower(r.cert.deficit)));
  const Table t = reports::p5_paper_size_table({{"search-like", path}}, task, o, "0.0");
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].size() == t.columns.size());
}

TEST_CASE("the refined path refuses scales that do not increase") {
  const Task task{5, 4, TriggerRange::kPaper};
  RefinedPathOptions o = small_options();
  o.scales = {1, 1};
  CHECK_THROWS_WITH_AS(refined_path(search_like_model(), task, o),
                       doctest::Contains("scales must increase"), std::invalid_argument);
  o.scales = {0, 1};
  CHECK_THROWS_WITH_AS(refined_path(search_like_model(), task, o),
                       doctest::Contains("scales must start positive"), std::invalid_argument);
}

TEST_CASE("table P5 labels every column and says what the loss at W bounds") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Table t = reports::p5_table(shared_path(), "a test model", task, small_options());
  CHECK(t.name == "p5_refined_search_path");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].size() == t.columns.size());
  CHECK(t.columns[4].text == "loss at W CERTIFIED");
  CHECK(t.columns[3].text == "max |r| on F NUMERIC(257)");
  bool says_lower = false;
  for (const auto& note : t.notes) {
    says_lower |= note.find("lower bound on the worst-case loss E") != std::string::npos;
  }
  CHECK(says_lower);
}

}  // namespace
}  // namespace sinkcert::theorems::studies
