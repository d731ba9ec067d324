// SPDX-License-Identifier: MIT
//
// The row-1 frontier's certified curves against the independent mpmath
// reference (scripts/row1_frontier_reference.py, the values below printed
// by it at 40 digits: G_closed, G_quad for the mutant, and the `table`
// command's g and U), and a mutation that the check g <= U must catch.
#include "theorems/studies/row1_frontier.h"

#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <utility>

#include "src/json_reader.h"

namespace sinkcert::theorems::studies {
namespace {

// The reference values are printed to 32 significant digits (values < 1):
// each is within 1e-32 of the true G, so the enclosure must meet
// [ref - 1e-31, ref + 1e-31] (a margin of 10x the printing error).
const Rational kReferenceTolerance = internal::parse_decimal("1e-31");
// The table prints g to 12 significant digits (g > 0.01: error < 5e-14);
// eps0 is within 2^-50 ~ 9e-16 of the crossing, below it.
constexpr double kTableTolerance = 1e-12;
// The upper model's E against U(delta): s' and lambda are rounded at 1e-15
// and beta = 40 adds e^-40 ~ 4e-18, so E is within far less than 1e-6 of U.
constexpr double kUpperModelRelative = 1e-6;
// ... and above U by at most 1e-14 (the table's note says so): s' - s <= 1e-15
// moves E by at most that (|dU/ds| <= 1), lambda's rounding by 5e-16.
const Rational kUpperModelExcess = internal::parse_decimal("1e-14");

// G's enclosure at a decimal eps meets [ref - tol, ref + tol].
bool encloses(int n, int L, const std::string& eps, const std::string& ref,
              const Row1Constants& c = {}) {
  PrecisionScope scope(kRow1Bits);
  const Mpfi G = row1_G(scalar_cast<Mpfi>(internal::parse_decimal(eps)), n, L, c);
  const Rational r = internal::parse_decimal(ref);
  return exact_compare(lower_of(G), Rational(r + kReferenceTolerance)) <= 0 &&
         exact_compare(upper_of(G), Rational(r - kReferenceTolerance)) >= 0;
}

TEST_CASE("G's MPFI enclosure contains the mpmath closed form") {
  // G_closed(eps, n, L) at mp.dps = 40
  CHECK(encloses(5, 4, "0.01", "0.008639953129454262258933578465486"));
  CHECK(encloses(5, 4, "0.1", "0.12119897374089180761481738953387"));
  CHECK(encloses(5, 4, "0.2", "0.36002352901421348561287470648008"));
  CHECK(encloses(5, 4, "0.3", "0.80251213159563661970789099596858"));
  CHECK(encloses(16, 16, "0.01", "0.0007916940783467750437488407727348"));
  CHECK(encloses(16, 16, "0.1", "0.010002516611765790093230365357348"));
  CHECK(encloses(16, 16, "0.2", "0.028319346852953361219563093580517"));
  CHECK(encloses(16, 16, "0.3", "0.071787276682735942540199263136197"));
  CHECK(encloses(4, 4, "0.2", "0.39049971949040396180335089695627"));
  // a wrong digit in the 20th place is seen
  CHECK_FALSE(encloses(5, 4, "0.1", "0.12119897374089180761581738953387"));
  // the flag mutant (t1 >= 1: G = f(o_F)) against the reference's quadrature
  const Row1Constants mutant{1};
  CHECK(encloses(5, 4, "0.3", "0.29032258064516129032258064516129", mutant));
  CHECK(encloses(5, 4, "0.4", "0.42857142857142857142857142857143", mutant));
  CHECK(encloses(5, 4, "0.45", "0.50943396226415094339622641509434", mutant));
}

TEST_CASE("G in double and MPFR agree with the enclosure; branches and domain") {
  PrecisionScope scope(kRow1Bits);
  for (const double eps : {0.003, 0.05, 0.2, 0.33, 0.4, 0.7}) {
    for (const auto& [n, L] : {std::pair{5, 4}, std::pair{16, 16}, std::pair{3, 5}}) {
      const Mpfi G = row1_G(Mpfi(eps), n, L);
      const double gd = row1_G(eps, n, L);
      const Mpfr gm = row1_G(Mpfr(eps), n, L);
      CHECK(exact_compare(lower_of(G), scalar_cast<Rational>(gm)) <= 0);
      CHECK(exact_compare(upper_of(G), scalar_cast<Rational>(gm)) >= 0);
      // double: O(k) operations, relative error well below 1e-12
      CHECK(std::abs(gd - to_double(G)) <= 1e-12 * to_double(G));
      CHECK(to_double(G) >= 0.0);
      CHECK(to_double(G) <= 1.0);
    }
  }
  // K >= 1 and t0 >= 1 (eps >= (L-2) / (2 (L-1))): every deficit may be 1
  CHECK(row1_G(0.5, 5, 4) == 1.0);
  // an interval eps whose K straddles 1 (eps = 1/3 at L = 4): [0, 1]
  const Mpfi straddle(Mpfr(0.333), Mpfr(0.334));
  const Mpfi G = row1_G(straddle, 5, 4);
  CHECK(lower_of(G) == 0);
  CHECK(upper_of(G) == 1);
  // the mutant's t1 = 3 eps / 2 + 2 / 3 (at L = 4) crosses 1 at eps = 2/9:
  // on an interval around it the hull holds both ends (G is nondecreasing)
  const Row1Constants mutant{1};
  const Mpfi across(Mpfr(0.2222), Mpfr(0.2223));
  const Mpfi Ga = row1_G(across, 5, 4, mutant);
  CHECK_FALSE(interval_is_nan(Ga));
  CHECK(lower_of(Ga) <= row1_G(Mpfr(0.2222), 5, 4, mutant));
  CHECK(upper_of(Ga) >= row1_G(Mpfr(0.2223), 5, 4, mutant));
  // the branch t1 >= 1 alone: G = f(o_F), o_F = 3 eps / (4 - 6 eps)
  const Mpfr e(0.3);
  CHECK(abs_of(row1_G(e, 5, 4, mutant) - Mpfr(Mpfr(3) * e / (Mpfr(4) - Mpfr(6) * e)) /
                                             (Mpfr(1) + Mpfr(3) * e / (Mpfr(4) - Mpfr(6) * e))) <
        Mpfr(1e-30));
  CHECK_THROWS_AS(row1_G(0.0, 5, 4), std::invalid_argument);
  CHECK_THROWS_AS(row1_G(0.1, 5, 2), std::invalid_argument);
}

TEST_CASE("the table: g certified <= U certified, both equal the reference") {
  // g and U from `row1_frontier_reference.py table` (12 digits; U exact)
  struct Ref {
    int n, L;
    const char* delta;
    double g;
    const char* U;
  };
  const Ref refs[] = {
      {5, 4, "0.5", 0.238203019593, "2/5"},     {5, 4, "0.2", 0.140723715248, "1/4"},
      {5, 4, "0.1", 0.0868140292131, "2/13"},   {5, 4, "0.05", 0.0499347662937, "2/23"},
      {5, 4, "0.02", 0.0221444172459, "2/53"},  {5, 4, "0.01", 0.0115107822839, "2/103"},
      {16, 16, "0.5", 0.439636096599, "14/29"}, {16, 16, "0.2", 0.387107554465, "7/16"},
      {16, 16, "0.1", 0.331610425522, "14/37"}, {16, 16, "0.05", 0.262358844256, "14/47"},
      {16, 16, "0.02", 0.162978040929, "2/11"}, {16, 16, "0.01", 0.0999805446848, "14/127"},
  };
  const auto rows =
      row1_frontier_rows({{5, 4}, {16, 16}}, {"0.5", "0.2", "0.1", "0.05", "0.02", "0.01"});
  REQUIRE(rows.size() == 12);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row1FrontierRow& r = rows[i];
    INFO("n = " << r.n << ", L = " << r.L << ", delta = " << refs[i].delta);
    CHECK(r.n == refs[i].n);
    CHECK(r.delta == internal::parse_decimal(refs[i].delta));
    // g: the certificate holds and eps0 is the reference's root, from below
    CHECK(exact_compare(r.lower.G_upper, r.delta) < 0);
    CHECK(r.lower.eps0 <= refs[i].g + kTableTolerance);
    CHECK(r.lower.eps0 >= refs[i].g - kTableTolerance);
    // U exact
    CHECK(r.U == Rational(refs[i].U));
    // the model: D' >= delta certified, E enclosed tightly around U
    CHECK(r.upper.D_at_least_delta);
    const double E_hi = r.upper.bound.upper.convert_to<double>();
    const double U = r.U.convert_to<double>();
    CHECK(r.upper.bound.lower <= r.upper.bound.upper);
    CHECK(std::abs(E_hi - U) <= kUpperModelRelative * U);
    CHECK(exact_compare(r.upper.bound.upper, Rational(r.U + kUpperModelExcess)) <= 0);
    CHECK(exact_compare(r.upper.bound.upper, r.U) >= 0);  // beta < inf: E > U
    // the sandwich g <= eps*_1(delta) <= E_upper
    CHECK(r.lower.eps0 <= E_hi);
    CHECK(r.ratio_upper >= 1);
  }
}

TEST_CASE("mutation: the flag lemma without u gives a 'g' above a certified model's E") {
  const Rational delta = internal::parse_decimal("0.5");
  const Row1UpperModel model = row1_upper_model(5, 4, delta);
  const Row1UpperCertificate cert = certify_row1_upper_model(model);
  REQUIRE(cert.D_at_least_delta);
  const Row1Lower right = row1_certified_lower(delta, 5, 4);
  const Row1Lower wrong = row1_certified_lower(delta, 5, 4, Row1Constants{1});
  // the theorem: below the model (0.2382 <= 0.4)
  CHECK(right.eps0 <= cert.bound.upper);
  // the mutant claims every model with D >= 1/2 has E >= 4/9 - 2^-50; the
  // model has D = 1/2 and E <= 0.4 + 1e-15: the check catches it
  CHECK(wrong.eps0 > cert.bound.upper);
  CHECK(std::abs(wrong.eps0 - 4.0 / 9.0) < 1e-12);
}

TEST_CASE("the integration step: G's closed form lies between certified Riemann sums") {
  // G = E[phi(T)] with phi nonincreasing: the lower and upper sums over
  // N = 2000 cells enclose it (CERTIFIED in MPFI) without the closed form's
  // algebra; the closed form's enclosure must lie inside. A closed form off
  // by a 1 % factor falls outside (the sums are 1e-3 apart, relative).
  PrecisionScope scope(kRow1Bits);
  constexpr int kCells = 2000;
  for (const auto& [n, L] : {std::pair{5, 4}, std::pair{16, 16}, std::pair{8, 6}}) {
    for (const char* text : {"0.01", "0.05", "0.2", "0.3"}) {
      const Mpfi eps(internal::parse_decimal(text));
      const Mpfi closed = row1_G(eps, n, L);
      const Mpfi sums = row1_G_riemann(eps, n, L, kCells);
      INFO("n " << n << " L " << L << " eps " << std::string(text));
      CHECK(lower_of(sums) <= lower_of(closed));
      CHECK(upper_of(closed) <= upper_of(sums));
      // the check has teeth: the sums are tight enough to catch 1 %
      CHECK(Mpfr(upper_of(sums) - lower_of(sums)) < Mpfr(0.01) * lower_of(closed));
    }
  }
}

TEST_CASE("a model's row-1 consequence holds at its own deficit, and says when it applies") {
  // The upper models' row-1 deficit D' does not depend on the content, so
  // both the uniform bound and the mean bound must hold at D' itself. The
  // mean bound is nearly attained at n = L = 16 (U/g <= 1.15 there): an eps
  // 20 % below the certified E gives a bound under D', so the check can fail.
  for (const auto& [n, L] : {std::pair{5, 4}, std::pair{16, 16}}) {
    for (const char* text : {"0.5", "0.1", "0.01"}) {
      const Row1UpperModel model = row1_upper_model(n, L, internal::parse_decimal(text));
      const Row1UpperCertificate cert = certify_row1_upper_model(model);
      const Task task{n, L, TriggerRange::kPaper};
      const Row1Consequence c = row1_consequence(ModelKind::kSingleLayer, AttentionKind::kSoftmax,
                                                 1, 1, task, cert.bound.upper);
      INFO("n " << n << " L " << L << " delta " << std::string(text));
      REQUIRE(c.applies);
      CHECK(c.mean_upper >= upper_of(cert.D));
      CHECK(c.uniform_upper >= upper_of(cert.D));
      CHECK(c.mean_upper <= c.uniform_upper);
      const Row1Consequence too_low =
          row1_consequence(ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1, task,
                           Mpfr(cert.bound.upper * Mpfr(0.8)));
      if (n == 16) CHECK(too_low.mean_upper < lower_of(cert.D));
    }
  }
  const Task paper{5, 4, TriggerRange::kPaper}, reference{5, 4, TriggerRange::kReferenceCode};
  CHECK_FALSE(
      row1_consequence(ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 2, paper, Mpfr(0.1))
          .applies);
  CHECK_FALSE(
      row1_consequence(ModelKind::kSingleLayer, AttentionKind::kRelu, 1, 1, paper, Mpfr(0.1))
          .applies);
  CHECK_FALSE(
      row1_consequence(ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1, reference, Mpfr(0.1))
          .applies);
  CHECK_FALSE(row1_consequence(ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1, paper,
                               std::numeric_limits<Mpfr>::infinity())
                  .applies);
  // E large: no uniform bound (K >= 1), reported as 1
  const Row1Consequence big =
      row1_consequence(ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1, paper, Mpfr(0.5));
  REQUIRE(big.applies);
  CHECK(big.uniform_upper == 1);
}

TEST_CASE("the upper model's file: exact decimals, task and provenance") {
  const Row1UpperModel m = row1_upper_model(5, 4, internal::parse_decimal("0.2"));
  // s' = ln(1/4) rounded up to 15 places
  CHECK(m.s == internal::parse_decimal("-1.386294361119890"));
  REQUIRE(m.file.task);
  CHECK(*m.file.task->L == 4);
  CHECK(m.file.metadata.at("U_exact") == "1/4");
  const WeightFile back = weight_file_from_document(
      internal::parse_json_document(weight_file_text(m.file), "row1_frontier_test"));
  CHECK(back.layers[0][0].A(4, 4) == m.s);
  CHECK(back.layers[0][0].M(1, 1) == m.lambda);
  CHECK(back.layers[0][0].A(1, 0) == Rational(-40));
  CHECK(back.layers[0][0].A(4, 1) == Rational(-40));
  CHECK(back.layers[0][0].M(0, 0) == 0);
}

}  // namespace
}  // namespace sinkcert::theorems::studies
