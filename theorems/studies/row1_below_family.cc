// SPDX-License-Identifier: MIT
#include "theorems/studies/row1_below_family.h"

#include <mpfr.h>

#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>

#include "search/minimax.h"
#include "search/row1_deficit.h"
#include "src/json_reader.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::theorems::studies {

namespace {

double down(const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDD); }
double up(const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDU); }

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

// The start: the family's model at delta + margin (decimal delta + margin
// exactly as a rational), in double.
Model<double> family_start(int n, int L, const Rational& delta_floor) {
  return to_model<double>(row1_upper_model(n, L, delta_floor).file);
}

// N(0, sigma) added to A_ab (a, b >= 2) and M_ab (a >= 1; b = 0 is u = M e_0).
Model<double> perturbed(const Model<double>& m, std::uint64_t seed, double sigma) {
  Model<double> out = m;
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  Head<double>& h = out.layers[0][0];
  const int n = static_cast<int>(h.A.rows());
  for (int a = 2; a < n; ++a)
    for (int b = 2; b < n; ++b) h.A(a, b) += noise(eng);
  for (int a = 1; a < n; ++a)
    for (int b = 0; b < n; ++b) h.M(a, b) += noise(eng);
  return out;
}

}  // namespace

Row1DeficitEnclosure row1_deficit_enclosure(const Matrix<Rational>& A, int cells, int bits) {
  const int n = static_cast<int>(A.rows());
  if (A.cols() != n || n < 3 || n > 6 || cells < 1) {
    throw std::invalid_argument("row1_deficit_enclosure needs an n x n A, 3 <= n <= 6, cells >= 1");
  }
  const int k = n - 3;
  PrecisionScope scope(bits);
  Matrix<Mpfi> Ai(n, n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) Ai(a, b) = scalar_cast<Mpfi>(A(a, b));
  const Mpfi one(1), two(2), half = Mpfi(1) / Mpfi(2);
  // r = 1 / cells (cells of width 2 / cells on [-1, 1])
  const Mpfi r = one / Mpfi(cells);
  const Mpfi r2 = r * r;
  // sigma(q) = 1 / (1 + e^-q)
  const auto sigma = [&](const Mpfi& q) {
    using std::exp;
    return one / (one + exp(-q));
  };
  long count = 1;
  for (int d = 0; d < k; ++d) count *= cells;
  Mpfi total(0);
  std::vector<Mpfi> mid(static_cast<std::size_t>(k)), box(static_cast<std::size_t>(k));
  std::vector<Mpfi> grad(static_cast<std::size_t>(k));
  for (long cell = 0; cell < count; ++cell) {
    long rest = cell;
    for (int d = 0; d < k; ++d) {
      const long idx = rest % cells;
      rest /= cells;
      // m = -1 + (2 idx + 1) / cells, B = [m - r, m + r]
      const Mpfi m = Mpfi(-1) + Mpfi(2 * idx + 1) * r;
      mid[static_cast<std::size_t>(d)] = m;
      box[static_cast<std::size_t>(d)] = Mpfi(lower_of(Mpfi(m - r)), upper_of(Mpfi(m + r)));
    }
    // alpha(m), enclosed at the centre
    const Mpfi at_mid = sigma(search::row1_logit(Ai, mid));
    // sigma, sigma', sigma'' over the cell
    const Mpfi sB = sigma(search::row1_logit(Ai, box));
    const Mpfi s1 = sB * (one - sB);
    const Mpfi s2 = s1 * (one - two * sB);
    // q_a = sum_{b>=2} (A_ib + A_bi) x_b - A_i0, i = 2 + a (x_{n-1} = 1, x_{2+d} = c_d)
    for (int a = 0; a < k; ++a) {
      const int i = 2 + a;
      Mpfi g = Ai(i, n - 1) + Ai(n - 1, i) - Ai(i, 0);
      for (int d = 0; d < k; ++d)
        g += (Ai(i, 2 + d) + Ai(2 + d, i)) * box[static_cast<std::size_t>(d)];
      grad[static_cast<std::size_t>(a)] = g;
    }
    // remainder R = (1/2) (sum_a H_aa r^2/3 + sum_{a!=b} H_ab r^2/4)
    Mpfi R(0);
    for (int a = 0; a < k; ++a) {
      for (int b = 0; b < k; ++b) {
        // d^2 alpha / dc_a dc_b = sigma'' q_a q_b + sigma' (A_ij + A_ji)
        const Mpfi h = s2 * grad[static_cast<std::size_t>(a)] * grad[static_cast<std::size_t>(b)] +
                       s1 * (Ai(2 + a, 2 + b) + Ai(2 + b, 2 + a));
        const Mpfi H(magnitude_of(h));
        R += a == b ? H * r2 / Mpfi(3) : H * r2 / Mpfi(4);
      }
    }
    R *= half;
    const Mpfr Ru = upper_of(R);
    // mean_B alpha in alpha(m) + [-R, R]
    total += at_mid + Mpfi(Mpfr(-Ru), Ru);
  }
  Row1DeficitEnclosure out;
  out.mean = total / Mpfi(static_cast<double>(count));
  out.cells = cells;
  out.bits = bits;
  return out;
}

Verdict verify_row1_deficit(const Row1DeficitEnclosure& D, const Rational& delta) {
  PrecisionScope scope(D.bits > 0 ? D.bits : kRow1DeficitBits);
  if (is_nan(D.mean)) return Verdict::kUndecided;
  if (exact_compare(lower_of(D.mean), delta) >= 0) return Verdict::kVerified;
  if (exact_compare(upper_of(D.mean), delta) < 0) return Verdict::kNotVerified;
  return Verdict::kUndecided;
}

std::vector<Row1BelowRow> row1_below_family(const Row1BelowOptions& o,
                                            const std::function<void(const std::string&)>& say) {
  const auto tell = [&](const std::string& s) {
    if (say) say(s);
  };
  const Task task{o.n, o.L, TriggerRange::kPaper};
  const search::Row1Quadrature rule = search::row1_quadrature(task.content_dim());
  std::vector<Row1BelowRow> rows;
  for (const std::string& text : o.deltas) {
    Row1BelowRow row;
    row.n = o.n;
    row.L = o.L;
    row.delta = internal::parse_decimal(text);
    row.U = row1_U(row.delta, o.L);
    row.g = row1_certified_lower(row.delta, o.n, o.L);
    const Rational floor_exact = row.delta + internal::parse_decimal(fmt("%.17g", o.margin));
    const double floor = floor_exact.convert_to<double>();
    const Model<double> family = family_start(o.n, o.L, floor_exact);
    double best = std::numeric_limits<double>::infinity();
    Model<double> kept;
    for (int s = 0; s <= o.perturbed_starts; ++s) {
      const std::uint64_t seed = o.seed * 1000 + static_cast<std::uint64_t>(s);
      const Model<double> init = s == 0 ? family : perturbed(family, seed, o.perturbation);
      search::MinimaxOptions mo;
      mo.seed = seed;
      mo.adversary.seed = seed;
      mo.surrogate = search::Surrogate::kLawson;
      mo.fit_m_first = false;
      mo.target_loss = 0;
      mo.max_rounds = o.rounds;
      mo.time_limit_seconds = o.start_seconds;
      mo.row1_deficit_floor = floor;
      // the start's saturated entries (beta = 40) must not take unbounded steps
      mo.lm_min_diagonal = kRow1LmMinDiagonal;
      mo.initial_penalty = kRow1InitialPenalty;
      mo.adversary_tolerance = o.adversary_tolerance;
      mo.lawson_reject_factor = o.reject_factor;
      mo.lm_iterations = o.lm_iterations;
      mo.initial_per_trigger = o.initial_per_trigger;
      const search::MinimaxResult res = search::minimax(
          init, task, mo, [&](const search::MinimaxRecord& r, const Model<double>&) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "row1 below family delta %s start %d round %d: worst case %.8f "
                          "(SEARCH lower bound), D_Q %.8f NUMERIC(53) (floor %.8f)%s, %.1f s",
                          text.c_str(), s, r.round, r.worst_case, r.row1_deficit, floor,
                          r.accepted ? "" : " rejected", r.elapsed);
            tell(buf);
          });
      Row1BelowStart st;
      st.name = s == 0 ? "family" : "perturbed " + std::to_string(s);
      st.feasible = res.feasible;
      st.worst = res.worst.certified;
      st.deficit_q = search::row1_mean_deficit(res.model.layers[0][0].A, rule);
      st.rounds = static_cast<int>(res.history.size());
      st.seconds = res.seconds;
      st.stop_reason = res.stop_reason;
      if (st.feasible && st.deficit_q >= floor && st.worst < best) {
        best = st.worst;
        row.best = s;
        kept = res.model;
      }
      row.starts.push_back(st);
    }
    if (row.best < 0) {
      tell("row1 below family delta " + text + ": no feasible model (SEARCH)");
      rows.push_back(std::move(row));
      continue;
    }
    row.deficit_q = search::row1_mean_deficit(kept.layers[0][0].A, rule);
    nlohmann::json meta = {
        {"generator", "theorems/studies/row1_below_family.h, row1_below_family"},
        {"search",
         "Lawson minimax (search/minimax.h) with the row-1 floor D_Q >= delta + margin "
         "(search/row1_deficit.h), from the explicit family's model and seeded perturbations"},
        {"n", o.n},
        {"L", o.L},
        {"delta", text},
        {"margin", o.margin},
        {"start", row.starts[static_cast<std::size_t>(row.best)].name},
        {"start_seed", o.seed * 1000 + static_cast<std::uint64_t>(row.best)},
        {"U_exact", row.U.str()}};
    row.file = weight_file_from_model(kept, meta);
    WeightTask wt;
    wt.L = o.L;
    wt.range = TriggerRange::kPaper;
    wt.source = "row-1 frontier: below the explicit family (search)";
    row.file.task = wt;
    row.file_name =
        "n" + std::to_string(o.n) + "_L" + std::to_string(o.L) + "_delta" + text + ".weights.json";
    const Model<Rational> exact = to_model<Rational>(row.file);
    row.D = row1_deficit_enclosure(exact.layers[0][0].A, o.cells);
    row.deficit_verdict = verify_row1_deficit(row.D, row.delta);
    bounds::WorstCaseOptions wo;
    wo.relative_gap = o.bound_gap;
    wo.max_boxes = o.bound_boxes;
    wo.max_seconds = o.bound_seconds;
    wo.threads = 1;
    wo.bits = kRow1Bits;
    row.E = bounds::bound_worst_case(exact, task, wo);
    {
      PrecisionScope scope(kRow1Bits);
      const Mpfi diff = scalar_cast<Mpfi>(row.U) - Mpfi(row.E.upper, row.E.upper);
      row.U_minus_E = lower_of(diff);
      row.below_U = row.deficit_verdict == Verdict::kVerified && row.U_minus_E > 0;
    }
    tell("row1 below family delta " + text + ": E in [" + fmt("%.9f", down(row.E.lower)) + ", " +
         fmt("%.9f", up(row.E.upper)) + "] CERTIFIED, D in [" +
         fmt("%.9f", down(lower_of(row.D.mean))) + ", " + fmt("%.9f", up(upper_of(row.D.mean))) +
         "] CERTIFIED, U = " + fmt("%.9f", row.U.convert_to<double>()) + " EXACT" +
         (row.below_U ? ": below U" : ": not below U"));
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json to_json(const Row1BelowRow& row) {
  nlohmann::json starts = nlohmann::json::array();
  for (const Row1BelowStart& s : row.starts) {
    starts.push_back({{"name", s.name},
                      {"feasible", s.feasible},
                      {"worst_case", s.worst},
                      {"worst_case_evidence", "SEARCH(lower bound)"},
                      {"deficit_quadrature", s.deficit_q},
                      {"deficit_quadrature_evidence", "NUMERIC(53)"},
                      {"rounds", s.rounds},
                      {"seconds", s.seconds},
                      {"stop_reason", s.stop_reason}});
  }
  nlohmann::json j = {{"n", row.n},
                      {"L", row.L},
                      {"delta", internal::exact_decimal(row.delta)},
                      {"U_exact", row.U.str()},
                      {"U", row.U.convert_to<double>()},
                      {"U_evidence", "EXACT"},
                      {"g_eps0", row.g.eps0},
                      {"g_evidence", "CERTIFIED"},
                      {"starts", starts},
                      {"best_start", row.best}};
  if (row.best < 0) return j;
  j["file"] = row.file_name;
  j["deficit_quadrature"] = row.deficit_q;
  j["deficit_quadrature_evidence"] = "NUMERIC(53)";
  j["deficit"] = {{"lower", down(lower_of(row.D.mean))},
                  {"upper", up(upper_of(row.D.mean))},
                  {"cells", row.D.cells},
                  {"bits", row.D.bits},
                  {"verdict_at_least_delta", to_string(row.deficit_verdict)},
                  {"evidence", "CERTIFIED"}};
  j["E"] = {{"lower", down(row.E.lower)},
            {"upper", up(row.E.upper)},
            {"upper_exact", internal::exact_decimal(scalar_cast<Rational>(row.E.upper))},
            {"relative_gap", row.E.relative_gap},
            {"boxes", row.E.boxes},
            {"verdict", to_string(row.E.verdict)},
            {"evidence", "CERTIFIED"}};
  j["U_minus_E_upper"] = down(row.U_minus_E);
  j["below_U"] = row.below_U;
  return j;
}

}  // namespace sinkcert::theorems::studies
