// SPDX-License-Identifier: MIT
#include "theorems/reports/theorem2_certified_report.h"

#include <doctest/doctest.h>

#include <limits>

namespace sinkcert::theorems::reports {
namespace {

// A head whose 1 - min BOS is enclosed in [lo, hi].
Theorem2CertifiedHead head(int layer, int h, double lo, double hi) {
  PrecisionScope scope(128);
  Theorem2CertifiedHead out;
  out.layer = layer;
  out.head = h;
  out.min.deficit_lower = Mpfr(lo);
  out.min.deficit_upper = Mpfr(hi);
  return out;
}

Theorem2CertifiedRow row(const std::string& name, int n, double e_lo, double e_hi,
                         std::vector<Theorem2CertifiedHead> heads) {
  PrecisionScope scope(128);
  Theorem2CertifiedRow r;
  r.name = name;
  r.task = Task{n, n == 5 ? 4 : n, TriggerRange::kPaper};
  r.layers = 2;
  r.heads = 2;
  r.loss.lower = Mpfr(e_lo);
  r.loss.upper = Mpfr(e_hi);
  r.per_head = std::move(heads);
  return r;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST_CASE("the sinking head: the smallest certified 1 - min BOS upper end") {
  // layer 1 head 1 has the smallest upper end, not the smallest lower end
  const Theorem2CertifiedRow r = row("m", 16, 1e-9, 1e-7,
                                     {head(0, 0, 0.9, 1.0), head(0, 1, 0.5, 1.0),
                                      head(1, 0, 1e-12, 1e-6), head(1, 1, 1e-10, 1e-8)});
  CHECK(sinking_head(r) == 3);
  // ties: the first
  CHECK(sinking_head(row("m", 16, 1e-9, 1e-7, {head(0, 0, 0.1, 0.2), head(0, 1, 0.1, 0.2)})) == 0);
  // a finite upper end beats an infinite one; among infinite ones the lower end decides
  CHECK(sinking_head(row("m", 16, 1e-9, 1e-7, {head(0, 0, 1e-9, kInf), head(0, 1, 0.5, 0.9)})) ==
        1);
  CHECK(sinking_head(row("m", 16, 1e-9, 1e-7, {head(0, 0, 0.3, kInf), head(0, 1, 0.2, kInf)})) ==
        1);
  CHECK(sinking_head(row("m", 16, 1e-9, 1e-7, {})) == -1);
}

TEST_CASE("F3: one point per model at its sinking head, enclosures as error bars") {
  const std::vector<Theorem2CertifiedRow> rows = {
      row("theorem2/path_start0", 16, 1e-9, 1e-7, {head(0, 0, 0.99, 1.0), head(1, 0, 3e-10, 5e-9)}),
      row("theorem2/n5_L4/eps_one_delta0.5", 5, 6e-9, 8e-9, {head(0, 1, 1e-9, 2e-9)}),
      // no witness: the lower end is not positive, gnuplot's missing value
      row("no witness", 16, -kInf, 1e-3, {head(0, 0, 0.0, 1e-3)}),
  };
  const Figure f = theorem2_certified_figure(rows);
  CHECK(f.name == "f3_theorem2_certified");
  CHECK(f.evidence.find("CERTIFIED") == 0);
  REQUIRE(f.columns.size() == 10u);
  REQUIRE(f.rows.size() == 3u);
  // model, n, layer, head, E_lower, E_upper, deficit_lower, deficit_upper, E_mid, deficit_mid
  CHECK(f.rows[0][0] == "theorem2/path_start0");
  CHECK(f.rows[0][1] == "16");
  CHECK(f.rows[0][2] == "1");
  CHECK(f.rows[0][3] == "0");
  // (6 significant digits)
  CHECK(f.rows[0][4] == "1.00000e-09");
  CHECK(f.rows[0][5] == "1.00000e-07");
  CHECK(f.rows[0][6] == "3.00000e-10");
  CHECK(f.rows[0][7] == "5.00000e-09");
  CHECK(f.rows[0][8] == "1.00000e-08");  // sqrt(1e-9 * 1e-7)
  CHECK(f.rows[1][2] == "0");
  CHECK(f.rows[1][3] == "1");
  CHECK(f.rows[2][4] == "?");
  CHECK(f.rows[2][8] == "1.00000e-03");  // the upper end alone
  CHECK(f.rows[2][6] == "?");
  // the plot reads the columns above: x = E_mid (9), y = deficit_mid (10)
  CHECK(f.plot.find("using 9:($2 == 5 ? $10 : 1/0):5:6:7:8") != std::string::npos);
  CHECK(f.plot.find("using 9:($2 == 16 ? $10 : 1/0):5:6:7:8") != std::string::npos);
  CHECK(f.plot.find("set xrange") == std::string::npos);
  // no finite point: fixed axes, so that gnuplot still renders the frame
  const Figure empty =
      theorem2_certified_figure({row("open", 16, -kInf, kInf, {head(0, 0, 0.0, kInf)})});
  CHECK(empty.rows.size() == 1u);
  CHECK(empty.plot.find("set xrange [1e-12:1]") != std::string::npos);
}

}  // namespace
}  // namespace sinkcert::theorems::reports
