// SPDX-License-Identifier: MIT
#include "theorems/precision_tables.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>

#include "search/adversary.h"
#include "search/worst_case_bound.h"
#include "src/constructions.h"
#include "src/forward.h"
#include "src/linf_error.h"
#include "src/weight_file.h"
#include "theorems/relu_exact_checker.h"

namespace sinkcert::theorems {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A value of T as an Mpfr, exactly (the current precision must be at least
// T's; Float128 goes through three doubles, which hold its 113 bits).
template <class T>
Mpfr exact_mpfr(const T& x) {
  if constexpr (std::is_same_v<T, Float128>) {
    const double hi = static_cast<double>(x);
    const Float128 r1 = x - Float128(hi);
    const double mid = static_cast<double>(r1);
    const double lo = static_cast<double>(r1 - Float128(mid));
    return Mpfr(hi) + Mpfr(mid) + Mpfr(lo);
  } else if constexpr (std::is_same_v<T, Mpfr>) {
    return x;
  } else {
    return Mpfr(static_cast<double>(x));
  }
}

template <class T>
Matrix<T> cast_matrix(const Matrix<double>& X) {
  return X.unaryExpr([](double v) { return T(v); });
}

// max_W e(X) and max_W max_{i >= 1, i != j} (1 - a_i0) for a model in T.
template <class T>
std::pair<T, T> witness_values(const Model<T>& model, const Task& task,
                               const std::vector<std::pair<int, Matrix<double>>>& witnesses) {
  T loss(0), deficit(0);
  bool first = true;
  for (const auto& [j, C] : witnesses) {
    const Matrix<T> X = make_input<T>(task, j, cast_matrix<T>(C));
    const auto r = forward(model, X);
    const Matrix<T> Y = make_target(X, j, target_kind_of(model.kind));
    const T e = linf_error(r.output, Y).value;
    loss = first ? e : max_of(loss, e);
    for (const auto& layer : r.attention) {
      for (const auto& a : layer) {
        for (int i = 1; i < task.L; ++i) {
          if (i == j) continue;
          // 1 - a_i0
          const T d = T(1) - a(i, 0);
          deficit = first ? d : max_of(deficit, d);
          first = false;
        }
      }
    }
    first = false;
  }
  return {loss, deficit};
}

template <class T>
void numeric_columns(const Task& task, double beta, const std::string& name, int bits,
                     PrecisionRow& row) {
  const auto witnesses = vertex_witnesses(task);
  const auto [loss, deficit] = witness_values(sink_family<T>(task.n, T(beta)), task, witnesses);
  PrecisionScope wide(std::max(bits, 128) + 64);
  row.loss_numeric.push_back({name, bits, exact_mpfr(loss), 0});
  row.deficit_numeric.push_back({name, bits, exact_mpfr(deficit), 0});
}

// The metadata's "worst_case_witness" {trigger, content rows} when it is a
// valid task input for `task` (else none: the file predates it or is foreign).
std::optional<std::pair<int, Matrix<double>>> recorded_witness(const nlohmann::json& meta,
                                                               const Task& task) {
  if (!meta.is_object() || !meta.contains("worst_case_witness")) return std::nullopt;
  const nlohmann::json& w = meta["worst_case_witness"];
  if (!w.is_object() || !w.contains("trigger") || !w["trigger"].is_number_integer() ||
      !w.contains("content") || !w["content"].is_array()) {
    return std::nullopt;
  }
  const int j = w["trigger"].get<int>();
  const auto triggers = task.trigger_positions();
  if (std::find(triggers.begin(), triggers.end(), j) == triggers.end()) return std::nullopt;
  const nlohmann::json& rows = w["content"];
  Matrix<double> C(task.L - 1, task.content_dim());
  if (static_cast<int>(rows.size()) != C.rows()) return std::nullopt;
  for (int r = 0; r < C.rows(); ++r) {
    if (!rows[r].is_array() || static_cast<int>(rows[r].size()) != C.cols()) return std::nullopt;
    for (int c = 0; c < C.cols(); ++c) {
      if (!rows[r][c].is_number()) return std::nullopt;
      const double v = rows[r][c].get<double>();
      if (!(v >= -1 && v <= 1)) return std::nullopt;
      C(r, c) = v;
    }
  }
  return std::make_pair(j, C);
}

// "6.37e-17 (3)" and its LaTeX form; ">= d" when the enclosure limits d.
Cell numeric_cell(const NumericValue& v, int certified) {
  PrecisionScope scope(512);
  const std::string value = v.value == 0 ? "0" : format_nearest(v.value, 3);
  const std::string digits =
      (v.correct_digits >= certified ? ">=" : "") + std::to_string(v.correct_digits);
  const std::string digits_tex =
      (v.correct_digits >= certified ? "$\\geq$" : "") + std::to_string(v.correct_digits);
  return Cell(value + " (" + digits + ")", latex_number(value) + " (" + digits_tex + ")");
}

}  // namespace

std::string bound_status(const search::WorstCaseBound& b) {
  if (b.verdict == Verdict::kVerified) return "gap reached";
  if (b.precision_floor) return "precision floor at " + std::to_string(b.bits) + " bits";
  if (bmp::isinf(b.upper)) return "no finite bound";
  if (b.budget_exhausted) return "budget exhausted";
  return b.stop_reason;
}

Cell interval_cell(const Mpfi& x, int digits) {
  const std::string text = format_interval(x, digits);
  return Cell(text, latex_interval(text));
}

std::string task_string(const Task& task) {
  return "n = " + std::to_string(task.n) + ", L = " + std::to_string(task.L) + ", triggers " +
         to_string(task.range);
}

std::vector<std::pair<int, Matrix<double>>> vertex_witnesses(const Task& task) {
  std::vector<std::pair<int, Matrix<double>>> out;
  for (int j : task.trigger_positions()) {
    for (double v : {1.0, -1.0}) {
      out.emplace_back(j, Matrix<double>::Constant(task.L - 1, task.content_dim(), v));
    }
  }
  return out;
}

namespace {

// T = double or Mpfr: the model's entries are enclosed in MPFI at each
// precision tried (exactly once it holds them).
template <class T>
WitnessCertificate certify_witnesses_of(
    const Model<T>& model, const Task& task,
    const std::vector<std::pair<int, Matrix<double>>>& witnesses, const AdaptiveOptions& options) {
  WitnessCertificate out;
  const AdaptiveResult r = certify_adaptively(
      [&] {
        const auto [loss, deficit] = witness_values(model.template cast<Mpfi>(), task, witnesses);
        return std::vector<Mpfi>{loss, deficit};
      },
      options);
  out.loss = r.values[0];
  out.deficit = r.values[1];
  out.bits = r.bits;
  out.digits = r.digits;
  out.reached = r.reached;
  return out;
}

}  // namespace

WitnessCertificate certify_witnesses(const Model<double>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options) {
  return certify_witnesses_of(model, task, witnesses, options);
}

WitnessCertificate certify_witnesses(const Model<Mpfr>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options) {
  return certify_witnesses_of(model, task, witnesses, options);
}

WitnessCertificate certify_witnesses(const Model<Rational>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options) {
  return certify_witnesses_of(model, task, witnesses, options);
}

std::vector<PrecisionRow> sink_family_precision_rows(const Task& task,
                                                     const std::vector<double>& betas, int digits,
                                                     const Progress& progress) {
  std::vector<PrecisionRow> rows;
  const auto witnesses = vertex_witnesses(task);
  for (double beta : betas) {
    const auto t0 = std::chrono::steady_clock::now();
    PrecisionRow row;
    row.beta = beta;
    AdaptiveOptions options;
    options.digits = digits;
    // E in [max_W lower e(X), max_j upper(box_j)]
    const AdaptiveResult loss = certify_adaptively(
        [&] {
          const Model<Mpfi> m = sink_family<Mpfi>(task.n, Mpfi(beta));
          Mpfr lower(-1), upper(-1);
          for (const auto& [j, C] : witnesses) {
            std::vector<double> content(C.data(), C.data() + C.size());
            const Mpfr low = search::certified_error_lower(m, task, j, content);
            if (low > lower) lower = low;
          }
          for (int j : task.trigger_positions()) {
            const Mpfr up = search::bound_box(m, task, search::full_content_box(task, j)).upper;
            if (up > upper) upper = up;
          }
          return std::vector<Mpfi>{Mpfi(lower, upper)};
        },
        options);
    row.loss = loss.values[0];
    row.loss_bits = loss.bits;
    row.loss_digits = loss.digits;
    // 1 - a_i0 over the whole box: the attention of forward<Mpfi> on it
    const AdaptiveResult deficit = certify_adaptively(
        [&] {
          const Model<Mpfi> m = sink_family<Mpfi>(task.n, Mpfi(beta));
          Mpfi worst(0);
          bool first = true;
          for (int j : task.trigger_positions()) {
            Matrix<Mpfi> C =
                Matrix<Mpfi>::Constant(task.L - 1, task.content_dim(), Mpfi(Mpfr(-1), Mpfr(1)));
            const auto r = forward(m, make_input<Mpfi>(task, j, C));
            for (int i = 1; i < task.L; ++i) {
              if (i == j) continue;
              const Mpfi d = Mpfi(1) - r.attention[0][0](i, 0);
              worst = first ? d : max_of(worst, d);
              first = false;
            }
          }
          return std::vector<Mpfi>{worst};
        },
        options);
    row.deficit = deficit.values[0];
    row.deficit_bits = deficit.bits;
    row.deficit_digits = deficit.digits;
    numeric_columns<float>(task, beta, "float (24)", 24, row);
    numeric_columns<double>(task, beta, "double (53)", 53, row);
    numeric_columns<Float128>(task, beta, "Float128 (113)", 113, row);
    {
      PrecisionScope scope(256);
      numeric_columns<Mpfr>(task, beta, "MPFR (257)", PrecisionScope::current_bits(), row);
    }
    for (auto& v : row.loss_numeric) v.correct_digits = correct_digits(v.value, row.loss);
    for (auto& v : row.deficit_numeric) v.correct_digits = correct_digits(v.value, row.deficit);
    row.seconds = seconds_since(t0);
    if (progress) {
      std::ostringstream msg;
      msg << "P1 beta = " << beta << ": loss " << row.loss_bits << " bits, 1 - BOS "
          << row.deficit_bits << " bits, " << row.seconds << " s";
      progress(msg.str());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

template <class T>
std::vector<ScaleRow> scale_path_of(const Model<T>& model, const Task& task,
                                    const std::vector<double>& scales,
                                    const AdaptiveOptions& options, const Progress& progress) {
  if (model.kind != ModelKind::kSingleLayer) {
    throw std::invalid_argument("scale path: single-layer models only");
  }
  const auto witnesses = vertex_witnesses(task);
  std::vector<ScaleRow> rows;
  for (double s : scales) {
    Model<T> scaled = model;
    // A -> s A (M kept); exact for a Rational model and for s a power of two
    for (auto& head : scaled.layers[0]) head.A *= scalar_cast<T>(Rational(s));
    ScaleRow row{s, certify_witnesses(scaled, task, witnesses, options)};
    if (progress) {
      std::ostringstream msg;
      msg << "P4 scale " << s << ": " << row.cert.bits << " bits";
      progress(msg.str());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ScaleRow> scale_path(const Model<double>& model, const Task& task,
                                 const std::vector<double>& scales, const AdaptiveOptions& options,
                                 const Progress& progress) {
  return scale_path_of(model, task, scales, options, progress);
}

std::vector<ScaleRow> scale_path(const Model<Rational>& model, const Task& task,
                                 const std::vector<double>& scales, const AdaptiveOptions& options,
                                 const Progress& progress) {
  return scale_path_of(model, task, scales, options, progress);
}

std::vector<ReluRow> relu_certificate_rows(const std::vector<std::pair<int, int>>& sizes,
                                           const Progress& progress) {
  std::vector<ReluRow> rows;
  for (const auto& [n, L] : sizes) {
    const Task task{n, L, TriggerRange::kPaper};
    const ReluCertificate cert = check_relu_exact(relu_construction<Rational>(n), task);
    rows.push_back({n, L, to_string(cert.verdict), cert.evidence.label(),
                    rational_string(cert.margin), cert.seconds});
    if (progress) {
      std::ostringstream msg;
      msg << "P3 n = " << n << ", L = " << L << ": " << rows.back().verdict << " in "
          << cert.seconds << " s";
      progress(msg.str());
    }
  }
  return rows;
}

namespace {

Table p1_table(const std::vector<PrecisionRow>& rows, const Task& task, bool loss) {
  Table t;
  t.fit_width = true;
  t.name = loss ? "p1_sink_loss" : "p1_sink_bos";
  const std::string what = loss ? "worst-case loss E" : "1 - min BOS mass";
  t.caption = "P1: softmax sink family, " + task_string(task) + ": " + what +
              " certified (MPFI, whole content box) and as computed in four precisions "
              "(correct significant digits in parentheses).";
  t.columns = {Cell("beta", "$\\beta$"),
               Cell(what + " CERTIFIED", loss ? "$E$ CERTIFIED" : "$1-\\min a_{i0}$ CERTIFIED"),
               "bits needed (" + std::to_string(kP1Digits) + " digits)"};
  const auto& first = loss ? rows.front().loss_numeric : rows.front().deficit_numeric;
  for (const auto& v : first) {
    t.columns.push_back(
        Cell(v.precision + " NUMERIC(" + std::to_string(v.bits) + ")",
             latex_escape(v.precision) + " NUMERIC(" + std::to_string(v.bits) + ")"));
  }
  for (const auto& row : rows) {
    std::ostringstream beta;
    beta << row.beta;
    std::vector<Cell> cells{beta.str(), interval_cell(loss ? row.loss : row.deficit, 6),
                            std::to_string(loss ? row.loss_bits : row.deficit_bits)};
    const int certified = loss ? row.loss_digits : row.deficit_digits;
    for (const auto& v : loss ? row.loss_numeric : row.deficit_numeric) {
      cells.push_back(numeric_cell(v, certified));
    }
    t.rows.push_back(std::move(cells));
  }
  t.notes = {
      "CERTIFIED: outward-rounded MPFI enclosure; the loss over the whole content box of every "
      "trigger (lower end from the vertex witnesses, upper end from the box), at the adaptive "
      "precision given (start 64 bits, +64 until " +
          std::to_string(kP1Digits) + " digits are certified).",
      "NUMERIC(p): maximum over the vertex witness set (content all +1 / all -1, every trigger) "
      "evaluated in p-bit arithmetic, no error bound; (d) = correct significant digits against "
      "the enclosure, >= when the enclosure limits the count. A value 0 has 0 correct digits."};
  return t;
}

}  // namespace

Table p1_loss_table(const std::vector<PrecisionRow>& rows, const Task& task) {
  return p1_table(rows, task, true);
}
Table p1_bos_table(const std::vector<PrecisionRow>& rows, const Task& task) {
  return p1_table(rows, task, false);
}

Table p3_table(const std::vector<ReluRow>& rows) {
  Table t;
  t.name = "p3_relu_certificate";
  t.caption =
      "P3: Theorem 3, the ReLU construction solves T(n, L) with zero error and zero BOS "
      "attention, checked in exact rational arithmetic over the whole content box.";
  t.columns = {
      "n",      "L", "verdict", "evidence", Cell("max |error| (exact)", "$\\max|f-y|$ (exact)"),
      "seconds"};
  t.alignment = "rrllrr";
  for (const auto& r : rows) {
    std::ostringstream secs;
    secs.precision(3);
    secs << r.seconds;
    t.rows.push_back(
        {std::to_string(r.n), std::to_string(r.L), r.verdict, r.evidence, r.margin, secs.str()});
  }
  t.notes = {
      "EXACT (theorems/relu_exact_checker.h): the scores read the flags only, so for each "
      "trigger the error is linear in the tokens, e_i = sum_k B_ik x_k with rational "
      "B_ik = sum_h a^h_ik M^h - t_ik I. It vanishes on the whole box iff every flag part "
      "sum_k B_ik f_k is 0 and every content block B_ik[:, C] is 0; the second is a "
      "membership test of (a^1_ik, .., a^H_ik, t_ik) in the kernel of one small matrix, "
      "reduced once. max |error| is the exact maximum over the box, attained at a vertex: "
      "|flag part| + sum |content coefficients|."};
  return t;
}

Table p4_table(const std::vector<ScaleRow>& rows, const std::string& model_name, const Task& task,
               double base_beta) {
  Table t;
  t.name = "p4_beyond_double";
  t.fit_width = true;
  std::ostringstream cap;
  cap << "P4: beyond double. Scale path A -> s A of " << model_name << " (" << task_string(task)
      << ", base beta = " << base_beta
      << "): certified loss at the vertex witness set and certified 1 - min BOS mass.";
  t.caption = cap.str();
  t.columns = {"s", Cell("loss at W CERTIFIED", "$\\max_W e(X)$ CERTIFIED"),
               Cell("1 - min BOS CERTIFIED", "$1-\\min a_{i0}$ CERTIFIED"), "bits needed",
               "digits"};
  for (const auto& r : rows) {
    std::ostringstream s;
    s << r.scale;
    t.rows.push_back({s.str(), interval_cell(r.cert.loss, 4), interval_cell(r.cert.deficit, 4),
                      std::to_string(r.cert.bits), std::to_string(r.cert.digits)});
  }
  t.notes = {
      "CERTIFIED: outward-rounded MPFI enclosures at the adaptive precision given. "
      "W: content all +1 and all -1 at every trigger position; for the sink family W "
      "attains the worst case (P1), for other models the loss column is a certified value "
      "at W only, a lower bound on E."};
  return t;
}

std::vector<BoundRow> worst_case_bound_rows(bool full, const Progress& progress) {
  std::vector<BoundRow> rows;
  std::vector<std::pair<int, int>> sizes{{5, 4}, {8, 8}, {16, 16}};
  if (full) sizes.push_back({32, 32});
  for (const auto& [n, L] : sizes) {
    const Task task{n, L, TriggerRange::kPaper};
    search::WorstCaseOptions options;
    options.relative_gap = 0.01;
    rows.push_back({"sink family, beta = 10", n, L,
                    search::bound_worst_case(sink_family<double>(n, 10.0), task, options)});
    if (progress)
      progress("B1 sink family n = " + std::to_string(n) + ", L = " + std::to_string(L));
  }
  // content-dependent scores: A, M with i.i.d. N(0, 0.2^2) entries, seed 21
  // (the model of tests/worst_case_bound_test.cc)
  for (double std_dev : full ? std::vector<double>{0.2, 0.5} : std::vector<double>{0.2}) {
    const Task task{5, 4, TriggerRange::kPaper};
    std::mt19937_64 eng(21);
    std::normal_distribution<double> normal(0.0, std_dev);
    Matrix<double> A(5, 5), M(5, 5);
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 5; ++c) {
        A(r, c) = normal(eng);
        M(r, c) = normal(eng);
      }
    }
    search::WorstCaseOptions options;
    options.relative_gap = 0.10;
    options.max_seconds = full ? 120.0 : 20.0;
    std::ostringstream name;
    name << "random softmax, std " << std_dev << ", seed 21";
    rows.push_back({name.str(), 5, 4,
                    search::bound_worst_case(
                        single_head_model<double>(AttentionKind::kSoftmax, A, M), task, options)});
    if (progress) progress("B1 " + name.str());
  }
  return rows;
}

Table b1_table(const std::vector<BoundRow>& rows) {
  Table t;
  t.name = "b1_worst_case_bound";
  t.fit_width = true;
  t.caption =
      "B1: certified worst-case loss E by interval branch and bound over the content box "
      "(every trigger position, paper convention): lower <= E <= upper.";
  t.columns = {"model",
               "n",
               "L",
               Cell("E lower CERTIFIED", "$E\\geq$ CERTIFIED"),
               Cell("E upper CERTIFIED", "$E\\leq$ CERTIFIED"),
               "relative gap",
               "boxes",
               "seconds",
               "bits",
               "verdict"};
  t.alignment = "lrrrrrrrrl";
  for (const auto& r : rows) {
    PrecisionScope scope(128);
    std::ostringstream gap, secs;
    gap.precision(2);
    gap << r.bound.relative_gap;
    secs.precision(3);
    secs << r.bound.seconds;
    const std::string lo = format_down(r.bound.lower, 4), hi = format_up(r.bound.upper, 4);
    t.rows.push_back({r.model, std::to_string(r.n), std::to_string(r.L), Cell(lo, latex_number(lo)),
                      Cell(hi, latex_number(hi)), gap.str(), std::to_string(r.bound.boxes),
                      secs.str(), std::to_string(r.bound.bits), bound_status(r.bound)});
  }
  t.notes = {
      "CERTIFIED: MPFI, starting at 128 bits and raised by 64 while rounding, not the box, "
      "limits the bound; bits: the precision used at the end. Lower: a witness input "
      "evaluated in intervals. Upper: the largest bound over the live boxes (linear form in "
      "the content with enclosed attention, intersected with a centered form for "
      "content-dependent softmax scores). Flags-only scores (sink family) need one box per "
      "trigger."};
  return t;
}

std::vector<SearchModelRow> search_model_rows(const std::string& dir, double bound_seconds,
                                              const Progress& progress) {
  namespace fs = std::filesystem;
  std::vector<SearchModelRow> rows;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return rows;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    WeightFile w;
    try {
      w = read_weight_file(file);
    } catch (const std::exception& e) {
      if (progress) progress("P2 skipping " + file + ": " + e.what());
      continue;
    }
    if (w.kind != ModelKind::kSingleLayer || w.attention != AttentionKind::kSoftmax) continue;
    SearchModelRow row;
    row.file = fs::path(file).filename().string();
    row.n = w.n;
    row.L = 16;
    const nlohmann::json& meta = w.metadata;
    if (meta.is_object()) {
      if (meta.contains("L") && meta["L"].is_number_integer()) row.L = meta["L"].get<int>();
      if (meta.contains("task") && meta["task"].is_object() && meta["task"].contains("L") &&
          meta["task"]["L"].is_number_integer()) {
        row.L = meta["task"]["L"].get<int>();
      }
    }
    const Task task{row.n, row.L, TriggerRange::kPaper};
    if (row.n < 3 || row.L < 2) continue;
    // The file's exact model (every CERTIFIED number is about it) and its
    // rounding to double, in which the adversary searches.
    const Model<Rational> exact = to_model<Rational>(w);
    const Model<double> model = exact.cast<double>();
    // search loss, re-evaluated: the adversary's witnesses and the one the
    // file records, each certified in MPFI on the exact model (a number
    // recorded in the metadata may have been computed in double and is not
    // used)
    row.search = search::maximize_error(model, task).best;
    search::certify_witness(exact, task, row.search);
    if (const auto recorded = recorded_witness(meta, task)) {
      search::Witness w2 = search::score_error(model, task, recorded->first, recorded->second);
      search::certify_witness(exact, task, w2);
      if (w2.certified > row.search.certified) row.search = w2;
    }
    {
      PrecisionScope scope(64);  // holds the double exactly; printed rounded down
      row.search_loss = format_down(Mpfr(row.search.certified), 4);
      if (row.search.double_disagrees) {
        // the search's own double value, which differs in the first digit
        row.search_loss += " (double " + format_nearest(Mpfr(row.search.value), 2) + ")";
      }
    }
    AdaptiveOptions options;
    options.digits = 6;
    row.witness = certify_witnesses(exact, task, vertex_witnesses(task), options);
    if (row.n == 5 && row.L == 4) {
      search::WorstCaseOptions bo;
      bo.relative_gap = 0.10;
      bo.max_seconds = bound_seconds;
      row.bound = search::bound_worst_case(exact, task, bo);
      row.bounded = true;
    }
    row.path = scale_path(exact, task, {1, 2, 4, 8, 16}, options);
    if (progress) progress("P2 " + row.file);
    rows.push_back(std::move(row));
  }
  return rows;
}

Table p2_table(const std::vector<SearchModelRow>& rows, const std::string& dir) {
  Table t;
  t.name = "p2_search_models";
  t.fit_width = true;
  t.caption = "P2: the best single-layer softmax models of the Theorem 1 search (" + dir +
              "), search loss beside certified values.";
  t.columns = {"file",
               "n",
               "L",
               Cell("search loss SEARCH(lower bound)", "search $E$ SEARCH(lower bound)"),
               Cell("loss at W CERTIFIED", "$\\max_W e$ CERTIFIED"),
               Cell("1 - min BOS at W CERTIFIED", "$1-\\min_W a_{i0}$ CERTIFIED"),
               Cell("E upper CERTIFIED", "$E\\leq$ CERTIFIED"),
               Cell("loss at W, s = 16 CERTIFIED", "$\\max_W e$, $s=16$ CERTIFIED")};
  t.alignment = "lrrrrrrr";
  for (const auto& r : rows) {
    PrecisionScope scope(128);
    std::string upper = "-";
    if (r.bounded) {
      upper = format_up(r.bound.upper, 3) +
              (r.bound.verdict == Verdict::kVerified ? "" : " (" + bound_status(r.bound) + ")");
    }
    const std::string scaled = r.path.empty() ? "-" : format_interval(r.path.back().cert.loss, 3);
    // "1.361e-04" or "6.245e-17 (double 5.6e-16)": the number in LaTeX form
    const std::size_t space = r.search_loss.find(' ');
    const std::string loss_number = r.search_loss.substr(0, space);
    const Cell loss_cell(
        r.search_loss,
        latex_number(loss_number) +
            (space == std::string::npos ? "" : latex_escape(r.search_loss.substr(space))));
    t.rows.push_back({r.file, std::to_string(r.n), std::to_string(r.L), loss_cell,
                      interval_cell(r.witness.loss, 3), interval_cell(r.witness.deficit, 3),
                      Cell(upper, r.bounded ? latex_number(format_up(r.bound.upper, 3)) : "-"),
                      Cell(scaled, r.path.empty() ? "-" : latex_interval(scaled))});
  }
  if (rows.empty()) {
    t.rows.push_back({"(no search model weight files found)", "", "", "", "", "", "", ""});
  }
  t.notes = {
      "search loss: the adversary (seed 0) on the file's model, and the witness input the "
      "file records if any, re-evaluated in MPFI at the witness (lower end rounded down): a "
      "certified value at one input, hence a lower bound on E found by search. W: content "
      "all +1 / all -1 at every trigger; a certified value at W is a lower bound on E. E "
      "upper: branch and bound (n = 5, L = 4 only). s: score matrix scaled A -> s A with M "
      "kept."};
  return t;
}

std::string p1_figure_data(const std::vector<PrecisionRow>& rows, const RunInfo& info) {
  std::ostringstream out;
  out << "# sinkcert figure data F1 (P1, 1 - min BOS mass)\n# command_line: " << info.command_line
      << "\n# revision: " << info.revision << "\n# seed: " << info.seed
      << "\n# precision: " << info.precision << "\n# beta certified_mid";
  if (!rows.empty()) {
    for (const auto& v : rows.front().deficit_numeric) out << " \"" << v.precision << "\"";
  }
  out << "\n";
  for (const auto& r : rows) {
    PrecisionScope scope(256);
    out << r.beta << " " << format_nearest(Mpfr(bmp::median(r.deficit)), 6);
    for (const auto& v : r.deficit_numeric) {
      out << " " << (v.value > 0 ? format_nearest(v.value, 6) : std::string("?"));
    }
    out << "\n";
  }
  return out.str();
}

std::string p1_figure_script(const std::string& data_path, const std::string& pdf_path) {
  std::ostringstream out;
  out << "set terminal pdfcairo size 5in,3.2in font \"Helvetica,10\"\n"
      << "set output '" << pdf_path << "'\n"
      << "set datafile missing '?'\n"
      << "set logscale xy\nset format y '10^{%T}'\n"
      << "set xlabel 'beta'\nset ylabel '1 - min BOS mass'\n"
      << "set xrange [4:400]\nset yrange [1e-145:1]\n"
      << "set key top right\nset grid\n"
      << "plot '" << data_path << "' using 1:2 with lines lw 2 title 'CERTIFIED (MPFI)', \\\n"
      << "  '' using 1:3 with points pt 4 ps 1.2 title 'float (24)', \\\n"
      << "  '' using 1:4 with points pt 6 ps 1.2 title 'double (53)', \\\n"
      << "  '' using 1:5 with points pt 8 ps 1.2 title 'Float128 (113)', \\\n"
      << "  '' using 1:6 with points pt 2 ps 1.2 title 'MPFR (257)'\n";
  return out.str();
}

std::string appendix_document(const std::vector<std::string>& table_stems,
                              const std::vector<std::string>& figures, const RunInfo& info,
                              const std::string& folder_name) {
  std::ostringstream out;
  out << "% sinkcert appendix (generated)\n";
  out << "% command_line: " << info.command_line << "\n% revision: " << info.revision
      << "\n% time_utc: " << info.time_utc << "\n% seed: " << info.seed
      << "\n% precision: " << info.precision << "\n";
  out << "\\documentclass[11pt]{article}\n"
         "\\usepackage[margin=2cm]{geometry}\n"
         "\\usepackage{booktabs}\n"
         "\\usepackage{graphicx}\n"
         "\\usepackage{amsmath}\n"
         "\\makeatletter\n"
         "\\def\\input@path{{./}{"
      << folder_name
      << "/}}\n"
         "\\makeatother\n"
         "\\graphicspath{{./}{"
      << folder_name
      << "/}}\n"
         "\\title{sinkcert: appendix tables}\n\\author{}\n"
         "\\date{"
      << latex_escape(info.time_utc)
      << "}\n"
         "\\begin{document}\n\\maketitle\n\n"
         "Generated by \\texttt{"
      << latex_escape(info.command_line) << "} at revision \\texttt{" << latex_escape(info.revision)
      << "} (seed " << info.seed << ", precision " << latex_escape(info.precision)
      << ").\n"
         "Evidence labels: EXACT (rational arithmetic), CERTIFIED (outward-rounded MPFI "
         "enclosure), NUMERIC(p) ($p$-bit floating point, no error bound), SEARCH (an "
         "optimizer's value, a bound in the stated direction only).\n\n";
  for (const auto& stem : table_stems) out << "\\input{" << stem << "}\n";
  if (!figures.empty()) out << "\\clearpage\n";
  for (const auto& fig : figures) {
    out << "\\begin{figure}[htbp]\n\\centering\n\\includegraphics[width=0.9\\linewidth]{" << fig
        << "}\n\\caption{\\texttt{" << latex_escape(fig) << "}}\n\\end{figure}\n";
  }
  out << "\\end{document}\n";
  return out.str();
}

}  // namespace sinkcert::theorems
