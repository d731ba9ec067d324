// SPDX-License-Identifier: MIT
//
// The certified row-1 deficit enclosure against the quadrature and the
// content-independent closed form, its verifier on a false claim, and one
// small search with its certification.
#include "theorems/studies/row1_below_family.h"

#include <doctest/doctest.h>

#include <random>

#include "search/row1_deficit.h"
#include "src/json_reader.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::studies {
namespace {

using testing::random_scores;

// The 16-point Gauss-Legendre value of an analytic integrand with entries
// of A ~ 0.5 is within 1e-12 of the integral; the enclosure must contain
// it up to that.
constexpr double kQuadratureError = 1e-12;

Matrix<Rational> exact_of(const Matrix<double>& A) {
  Matrix<Rational> R(A.rows(), A.cols());
  for (Eigen::Index a = 0; a < A.rows(); ++a)
    for (Eigen::Index b = 0; b < A.cols(); ++b) R(a, b) = Rational(A(a, b));
  return R;
}

bool contains(const Mpfi& x, double v, double slack) {
  return lower_of(x) <= Mpfr(v + slack) && upper_of(x) >= Mpfr(v - slack);
}

TEST_CASE("the deficit enclosure contains the quadrature, even with coarse cells") {
  const int n = 5;
  for (unsigned seed : {1u, 2u, 3u}) {
    const Matrix<double> A = random_scores(n, 0.5, seed);
    const double q = search::row1_mean_deficit(A, search::row1_quadrature(2));
    // coarse cells: a wrong remainder would exclude the integral here
    for (int cells : {2, 4, 64}) {
      const Row1DeficitEnclosure D = row1_deficit_enclosure(exact_of(A), cells);
      CHECK(contains(D.mean, q, kQuadratureError));
    }
    // the remainder shrinks as cells^-2 (r^2 H): a factor ~4 from 32 to 64
    // cells (more than 3, less than 5: H's enclosure over a cell also narrows)
    const Row1DeficitEnclosure fine = row1_deficit_enclosure(exact_of(A), 64);
    const Row1DeficitEnclosure coarse = row1_deficit_enclosure(exact_of(A), 32);
    const Mpfr ratio = width_of(coarse.mean) / width_of(fine.mean);
    CHECK(ratio > Mpfr(3));
    CHECK(ratio < Mpfr(5));
    CHECK(width_of(fine.mean) < Mpfr(2e-4));
  }
}

TEST_CASE("a content-independent row-1 logit: the enclosure holds sigma(q) and is narrow") {
  const int n = 5;
  Matrix<double> A = Matrix<double>::Zero(n, n);
  A(n - 1, n - 1) = 0.25;
  const Row1DeficitEnclosure D = row1_deficit_enclosure(exact_of(A), 8);
  const double s = 1 / (1 + std::exp(-0.25));
  CHECK(contains(D.mean, s, 1e-15));
  CHECK(width_of(D.mean) < Mpfr(1e-25));
}

TEST_CASE("verify_row1_deficit: VERIFIED for a true floor, NOT VERIFIED for a false one") {
  const int n = 5;
  const Matrix<double> A = random_scores(n, 0.5, 4);
  const double q = search::row1_mean_deficit(A, search::row1_quadrature(2));
  const Row1DeficitEnclosure D = row1_deficit_enclosure(exact_of(A), 64);
  CHECK(verify_row1_deficit(D, Rational(q - 1e-4)) == Verdict::kVerified);
  CHECK(verify_row1_deficit(D, Rational(q + 1e-4)) == Verdict::kNotVerified);
  // a floor inside the enclosure cannot be decided
  CHECK(verify_row1_deficit(row1_deficit_enclosure(exact_of(A), 1), Rational(q)) ==
        Verdict::kUndecided);
}

TEST_CASE("a short search at delta = 0.5 keeps a feasible model and certifies it") {
  Row1BelowOptions o;
  o.deltas = {"0.5"};
  o.perturbed_starts = 1;
  o.rounds = 3;
  o.start_seconds = 20;
  o.bound_gap = 1e-3;
  o.bound_seconds = 10;
  o.cells = 32;
  const auto rows = row1_below_family(o, {});
  REQUIRE(rows.size() == 1);
  const Row1BelowRow& r = rows[0];
  REQUIRE(r.best >= 0);
  CHECK(r.starts.size() == 2);
  CHECK(r.deficit_q >= 0.5 + o.margin);
  CHECK(r.deficit_verdict == Verdict::kVerified);
  // E's certified enclosure holds the search's lower bound of that model
  CHECK(r.E.lower <= r.E.upper);
  CHECK(Mpfr(r.starts[static_cast<std::size_t>(r.best)].worst) <= r.E.upper);
  // below_U exactly when the certified numbers say so
  CHECK(r.below_U == (r.deficit_verdict == Verdict::kVerified && r.U_minus_E > 0));
  const nlohmann::json j = to_json(r);
  CHECK(j.at("deficit").at("evidence") == "CERTIFIED");
  CHECK(j.at("U_exact") == "2/5");
}

}  // namespace
}  // namespace sinkcert::theorems::studies
