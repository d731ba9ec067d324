// SPDX-License-Identifier: MIT
#include "theorems/studies/row1_frontier.h"

#include <mpfr.h>

#include <stdexcept>

#include "src/json_reader.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::theorems::studies {

namespace {

// 10^kDecimalPlaces, exactly.
Rational decimal_unit() {
  Rational r = 1;
  for (int i = 0; i < kDecimalPlaces; ++i) r *= 10;
  return r;
}

// x rounded to kDecimalPlaces decimal places: up (rnd = MPFR_RNDU, the
// result is >= x) or to nearest (MPFR_RNDN).
Rational to_decimal_places(const Mpfr& x, mpfr_rnd_t rnd) {
  const Rational unit = decimal_unit();
  // scaled = x 10^places, rounded in the direction rnd, then to an integer
  // in the same direction
  Mpfr scaled = x;
  mpfr_mul_z(scaled.backend().data(), x.backend().data(), numerator(unit).backend().data(), rnd);
  mpfr_rint(scaled.backend().data(), scaled.backend().data(), rnd);
  return scalar_cast<Rational>(scaled) / unit;
}

void check_delta(const Rational& delta) {
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("delta must be in (0, 1)");
}

}  // namespace

Row1Lower row1_certified_lower(const Rational& delta, int n, int L, const Row1Constants& c) {
  check_delta(delta);
  PrecisionScope scope(kRow1Bits);
  Row1Lower out;
  out.delta = delta;
  out.bits = PrecisionScope::current_bits();
  // upper(G(eps)) for a dyadic eps (Mpfi(double) is exact)
  const auto G_upper = [&](double eps) { return upper_of(row1_G(Mpfi(eps), n, L, c)); };
  // the certificate: upper(G(eps)) < delta, compared exactly
  const auto certifies = [&](const Mpfr& u) { return !is_nan(u) && exact_compare(u, delta) < 0; };
  double lo = 0.0, hi = 1.0;
  out.G_upper = Mpfr(0);  // G(0) = 0: eps0 = 0 certifies nothing but holds
  const Mpfr at_one = G_upper(hi);
  if (certifies(at_one)) {
    out.eps0 = hi;
    out.G_upper = at_one;
    return out;
  }
  for (int step = 0; step < kRow1BisectionSteps; ++step) {
    const double mid = (lo + hi) / 2;  // exact: a dyadic in (lo, hi)
    const Mpfr u = G_upper(mid);
    if (certifies(u)) {
      lo = mid;
      out.G_upper = u;
    } else {
      hi = mid;
    }
  }
  out.eps0 = lo;
  return out;
}

Row1Consequence row1_consequence(ModelKind kind, AttentionKind attention, int layers, int heads,
                                 const Task& task, const Mpfr& eps) {
  Row1Consequence out;
  out.eps = eps;
  if (kind != ModelKind::kSingleLayer || layers != 1 || heads != 1 ||
      attention != AttentionKind::kSoftmax) {
    out.reason = "the theorem covers single-layer, single-head softmax models";
  } else if (task.range != TriggerRange::kPaper) {
    out.reason = "the theorem needs the paper trigger convention (a trigger at position 1)";
  } else if (task.L < 3) {
    out.reason = "the theorem needs L >= 3";
  } else if (!bmp::isfinite(eps)) {
    out.reason = "no finite upper end of E";
  } else if (!(eps > 0)) {
    out.reason = "the upper end of E is 0";
  }
  if (!out.reason.empty()) return out;
  PrecisionScope scope(kRow1Bits);
  const Mpfi e(eps, eps);
  // f(o_F); an undecided K < 1 gives [0, 1], whose upper end is the trivial 1
  out.uniform_upper = upper_of(row1_flag_deficit(e, task.L));
  out.mean_upper = upper_of(row1_G(e, task.n, task.L));
  if (out.mean_upper > out.uniform_upper)
    out.mean_upper = out.uniform_upper;  // a mean of values <= it
  out.applies = true;
  return out;
}

std::string row1_consequence_text(const Row1Consequence& c) {
  if (!c.applies) return "row 1 BOS deficit: NOT APPLICABLE (" + c.reason + ")";
  const auto up = [](const Mpfr& x) {
    char buf[64];
    mpfr_snprintf(buf, sizeof buf, "%.3RUe", x.backend().data());
    return std::string(buf);
  };
  return "row 1 BOS deficit [CERTIFIED; the row-1 frontier theorem applied to this model's "
         "certified E <= " +
         up(c.eps) + "]: 1 - a_10 <= " + up(c.uniform_upper) +
         " at every content, mean over uniform content <= " + up(c.mean_upper);
}

nlohmann::json to_json(const Row1Consequence& c) {
  if (!c.applies) return {{"applies", false}, {"reason", c.reason}};
  const auto up = [](const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDU); };
  return {{"applies", true},
          {"eps", up(c.eps)},
          {"uniform_upper", up(c.uniform_upper)},
          {"mean_upper", up(c.mean_upper)},
          {"evidence", "CERTIFIED"}};
}

Rational row1_U(const Rational& delta, int L) {
  // U = (L-2) delta / (1 + (2L-5) delta)
  return Rational((L - 2) * delta / (1 + (2 * L - 5) * delta));
}

Row1UpperModel row1_upper_model(int n, int L, const Rational& delta, double beta) {
  check_delta(delta);
  if (n < 4 || L < 3) throw std::invalid_argument("the upper family needs n >= 4 and L >= 3");
  PrecisionScope scope(256);
  Row1UpperModel out;
  out.n = n;
  out.L = L;
  out.delta = delta;
  out.beta = beta;
  // s = ln(delta / (1 - delta)), enclosed; s' = its upper end rounded up
  const Mpfi d = scalar_cast<Mpfi>(delta);
  using std::exp;
  using std::log;
  const Mpfi s = log(d / (Mpfi(1) - d));
  out.s = to_decimal_places(upper_of(s), MPFR_RNDU);
  // w = (L-2) e^s' + e^-beta,  alpha' = w / (1 + w),  lambda = 1 / (1 + alpha')
  const Mpfr sp = scalar_cast<Mpfr>(out.s);
  const Mpfr w = Mpfr(L - 2) * exp(sp) + exp(Mpfr(-beta));
  const Mpfr alpha = w / (1 + w);
  out.lambda = to_decimal_places(Mpfr(1 / (1 + alpha)), MPFR_RNDN);
  // A = s' e_{n-1} e_{n-1}^T - beta e_{n-1} e_1^T - beta e_1 e_0^T
  const Rational b(beta);  // a double: exact
  Matrix<Rational> A = Matrix<Rational>::Zero(n, n);
  A(n - 1, n - 1) = out.s;
  A(n - 1, kTriggerFlag) = -b;
  A(kTriggerFlag, kBosFlag) = -b;
  // M = lambda (I - e_0 e_0^T)
  Matrix<Rational> M = Matrix<Rational>::Zero(n, n);
  for (int i = 1; i < n; ++i) M(i, i) = out.lambda;
  nlohmann::json meta = {
      {"family",
       "row-1 frontier upper family: A = s e_{n-1} e_{n-1}^T - beta e_{n-1} e_1^T - "
       "beta e_1 e_0^T, M = lambda (I - e_0 e_0^T) (docs/methods.md, The row-1 frontier)"},
      {"generator", "theorems/studies/row1_frontier.h, row1_upper_model"},
      {"n", n},
      {"L", L},
      {"delta", internal::exact_decimal(delta)},
      {"s", internal::exact_decimal(out.s)},
      {"s_rounding", "ln(delta / (1 - delta)) rounded up to 15 decimal places"},
      {"beta", beta},
      {"lambda", internal::exact_decimal(out.lambda)},
      {"lambda_rounding",
       "1 / (1 + alpha'), alpha' = w / (1 + w), w = (L-2) e^s + e^-beta, to nearest at 15 "
       "decimal places"},
      {"U_exact", row1_U(delta, L).str()}};
  out.file = weight_file_from_model(
      single_head_model<Rational>(AttentionKind::kSoftmax, std::move(A), std::move(M)), meta);
  WeightTask task;
  task.L = L;
  task.range = TriggerRange::kPaper;
  task.source = "row-1 frontier upper family";
  out.file.task = task;
  return out;
}

Row1UpperCertificate certify_row1_upper_model(const Row1UpperModel& model) {
  Row1UpperCertificate out;
  {
    PrecisionScope scope(kRow1Bits);
    // D' = 1 / (1 + e^-s')
    using std::exp;
    out.D = Mpfi(1) / (Mpfi(1) + exp(-scalar_cast<Mpfi>(model.s)));
    out.D_at_least_delta = !is_nan(out.D) && exact_compare(lower_of(out.D), model.delta) >= 0;
  }
  const Task task{model.n, model.L, TriggerRange::kPaper};
  bounds::WorstCaseOptions o;
  // the first pass is the exact range (content-independent attention), so
  // the gap closes at once; the budget is a guard
  o.relative_gap = 1e-9;
  o.max_boxes = 2000;
  o.max_seconds = bounds::kNoTimeLimit;
  o.adversary_witnesses = false;
  o.threads = 1;
  o.bits = kRow1Bits;
  out.bound = bounds::bound_worst_case(to_model<Rational>(model.file), task, o);
  return out;
}

std::vector<Row1FrontierRow> row1_frontier_rows(const std::vector<std::pair<int, int>>& sizes,
                                                const std::vector<std::string>& deltas) {
  std::vector<Row1FrontierRow> rows;
  for (const auto& [n, L] : sizes) {
    for (const std::string& text : deltas) {
      Row1FrontierRow row;
      row.n = n;
      row.L = L;
      row.delta = internal::parse_decimal(text);
      row.lower = row1_certified_lower(row.delta, n, L);
      row.model = row1_upper_model(n, L, row.delta);
      row.upper = certify_row1_upper_model(row.model);
      row.U = row1_U(row.delta, L);
      // E_upper / eps0, rounded up
      PrecisionScope scope(kRow1Bits);
      row.ratio_upper = Mpfr(0);
      mpfr_div_d(row.ratio_upper.backend().data(), row.upper.bound.upper.backend().data(),
                 row.lower.eps0, MPFR_RNDU);
      row.file = "q1_row1_n" + std::to_string(n) + "_L" + std::to_string(L) + "_delta" + text +
                 ".weights.json";
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace sinkcert::theorems::studies
