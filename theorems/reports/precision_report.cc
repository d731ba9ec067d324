// SPDX-License-Identifier: MIT
#include "theorems/reports/precision_report.h"

#include <cmath>
#include <sstream>

#include "theorems/reports/figure_frame.h"
#include "theorems/studies/theorem1_study.h"

namespace sinkcert::theorems::reports {

namespace {

// "6.37e-17 (3)" and its LaTeX form; ">= d" when the enclosure limits d.
Cell numeric_cell(const studies::NumericValue& v, int certified) {
  PrecisionScope scope(512);
  const std::string value = v.value == 0 ? "0" : format_nearest(v.value, 3);
  const std::string digits =
      (v.correct_digits >= certified ? ">=" : "") + std::to_string(v.correct_digits);
  const std::string digits_tex =
      (v.correct_digits >= certified ? "$\\geq$" : "") + std::to_string(v.correct_digits);
  return Cell(value + " (" + digits + ")", latex_number(value) + " (" + digits_tex + ")");
}

// A cell set on two lines in LaTeX (a one-column tabular aligned `align`,
// at the baseline `pos`): header cells, and long cells of landscape tables.
Cell stacked(const std::string& text, const std::string& line1, const std::string& line2,
             char align = 'c', char pos = 'b') {
  return Cell(text, std::string("\\begin{tabular}[") + pos + "]{@{}" + align + "@{}}" + line1 +
                        "\\\\ " + line2 + "\\end{tabular}");
}

// A number with a parenthesized remark: "2.46e-11 (budget exhausted)", in
// LaTeX the remark on a second, smaller line.
Cell remark_cell(const std::string& number, const std::string& remark) {
  if (remark.empty()) return Cell(number, latex_number(number));
  return stacked(number + " " + remark, latex_number(number),
                 "{\\footnotesize " + latex_escape(remark) + "}", 'r', 't');
}

// A weight file's name, in LaTeX without ".weights.json" and with its folder
// on a line of its own.
Cell file_cell(const std::string& file) {
  const std::string suffix = ".weights.json";
  std::string stem = file;
  if (stem.size() > suffix.size() &&
      stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0) {
    stem.resize(stem.size() - suffix.size());
  }
  const auto slash = stem.rfind('/');
  if (slash == std::string::npos) return Cell(file, latex_escape(stem));
  return stacked(file, latex_escape(stem.substr(0, slash + 1)),
                 latex_escape(stem.substr(slash + 1)), 'l', 't');
}

// "2.60e-117 (9.3 %, 67)": the certified upper end (rounded up), the gap to
// the certified lower end and the boxes; "-" when not run.
Cell bound_cell(const studies::RefinedPathRow& r) {
  if (!r.bounded) return Cell("-");
  std::ostringstream tail;
  tail.precision(2);
  tail << " (" << std::fixed << 100 * r.bound.relative_gap << " %, " << r.bound.boxes
       << (r.bound.budget_exhausted ? ", budget" : "") << ")";
  return remark_cell(format_up(r.bound.upper, 3), tail.str().substr(1));
}

}  // namespace

Cell rational_cell(const Rational& r) {
  const std::string text = bmp::denominator(r) == 1
                               ? bmp::numerator(r).str()
                               : bmp::numerator(r).str() + "/" + bmp::denominator(r).str();
  return Cell(text, "$" + text + "$");
}

std::string bound_status(const bounds::WorstCaseBound& b) {
  return bounds::stop_status(b, !bmp::isinf(b.upper));
}

std::string task_string(const Task& task) {
  return "n = " + std::to_string(task.n) + ", L = " + std::to_string(task.L) + ", triggers " +
         to_string(task.range);
}

namespace {

Table p1_table(const std::vector<studies::PrecisionRow>& rows, const Task& task, bool loss) {
  Table t;
  t.landscape = true;
  t.name = loss ? "p1_sink_loss" : "p1_sink_bos";
  const std::string what = loss ? "worst-case loss E" : "1 - min BOS mass";
  t.caption = "P1: softmax sink family, " + task_string(task) + ": " + what +
              " certified (MPFI, whole content box) and as computed in four precisions "
              "(correct significant digits in parentheses).";
  t.caption_latex =
      "P1: softmax sink family, " + latex_escape(task_string(task)) + ": " +
      (loss ? "worst-case loss $E$" : "$1-\\min a_{i0}$, one minus the smallest BOS mass,") +
      " certified (MPFI, whole content box) and as computed in four precisions "
      "(correct significant digits in parentheses).";
  const std::string bits_needed = "bits needed (" + std::to_string(studies::kP1Digits) + " digits)";
  t.columns = {
      Cell("beta", "$\\beta$"),
      stacked(what + " CERTIFIED", loss ? "$E$" : "$1-\\min a_{i0}$", "CERTIFIED"),
      stacked(bits_needed, "bits needed", "(" + std::to_string(studies::kP1Digits) + " digits)")};
  const auto& first = loss ? rows.front().loss_numeric : rows.front().deficit_numeric;
  for (const auto& v : first) {
    const std::string numeric = "NUMERIC(" + std::to_string(v.bits) + ")";
    t.columns.push_back(stacked(v.precision + " " + numeric, latex_escape(v.precision), numeric));
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
  const std::string digits = std::to_string(studies::kP1Digits);
  const std::string numeric_note =
      " evaluated in p-bit arithmetic, no error bound; (d) = correct significant digits against "
      "the enclosure, >= when the enclosure limits the count. A value 0 has 0 correct digits.";
  if (loss) {
    t.notes = {
        "CERTIFIED: outward-rounded MPFI enclosure of the worst-case loss E over the whole "
        "content box of every trigger (lower end from the vertex witnesses, upper end from the "
        "box), at the adaptive precision given (start 64 bits, +64 until " +
            digits + " digits are certified).",
        "NUMERIC(p): the largest loss over the vertex witness set (content all +1 / all -1, "
        "every trigger)" +
            numeric_note};
    t.notes_latex = {
        "CERTIFIED: outward-rounded MPFI enclosure of the worst-case loss $E$ over the whole "
        "content box of every trigger (lower end from the vertex witnesses, upper end from the "
        "box), at the adaptive precision given (start 64 bits, $+64$ until " +
            digits + " digits are certified).",
        "NUMERIC($p$): the largest loss over the vertex witness set (content all $+1$ / all "
        "$-1$, every trigger) evaluated in $p$-bit arithmetic, no error bound; ($d$) = correct "
        "significant digits against the enclosure, $\\ge$ when the enclosure limits the count. "
        "A value 0 has 0 correct digits."};
  } else {
    t.notes = {
        "The column is 1 - min a_i0: one minus the smallest BOS mass a_i0 over every trigger j, "
        "every non-trigger position i >= 1 and every content (the largest BOS deficit; for "
        "this family (L-1) / (e^beta + L-1), at i = L-1). CERTIFIED: outward-rounded MPFI "
        "enclosure of 1 - a_i0 computed from the attention over the whole content box of every "
        "trigger (the scores read flags only, so the box gives the value up to rounding), at "
        "the adaptive precision given (start 64 bits, +64 until " +
            digits + " digits are certified).",
        "NUMERIC(p): 1 - a_i0 computed in p-bit arithmetic, the largest over the same positions "
        "at the vertex witness set (content all +1 / all -1, every trigger)" +
            numeric_note};
    t.notes_latex = {
        "The column is $1-\\min a_{i0}$: one minus the smallest BOS mass $a_{i0}$ over every "
        "trigger $j$, every non-trigger position $i\\ge 1$ and every content (the largest BOS "
        "deficit; for this family $(L-1)/(e^{\\beta}+L-1)$, at $i=L-1$). CERTIFIED: "
        "outward-rounded MPFI enclosure of $1-a_{i0}$ computed from the attention over the whole "
        "content box of every trigger (the scores read flags only, so the box gives the value "
        "up to rounding), at the adaptive precision given (start 64 bits, $+64$ until " +
            digits + " digits are certified).",
        "NUMERIC($p$): $1-a_{i0}$ computed in $p$-bit arithmetic, the largest over the same "
        "positions at the vertex witness set (content all $+1$ / all $-1$, every trigger), no "
        "error bound; ($d$) = correct significant digits against the enclosure, $\\ge$ when the "
        "enclosure limits the count. A value 0 has 0 correct digits."};
  }
  return t;
}

}  // namespace

Table p1_loss_table(const std::vector<studies::PrecisionRow>& rows, const Task& task) {
  return p1_table(rows, task, true);
}
Table p1_bos_table(const std::vector<studies::PrecisionRow>& rows, const Task& task) {
  return p1_table(rows, task, false);
}

Table p3_table(const std::vector<studies::ReluRow>& rows) {
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
    t.rows.push_back({std::to_string(r.n), std::to_string(r.L), to_string(r.verdict),
                      r.evidence.label(), rational_cell(r.margin), secs.str()});
  }
  t.notes = {
      "EXACT (theorems/exact/relu_exact_checker.h): the scores read the flags only, so for each "
      "trigger the error is linear in the tokens, e_i = sum_k B_ik x_k with rational "
      "B_ik = sum_h a^h_ik M^h - t_ik I. It vanishes on the whole box iff every flag part "
      "sum_k B_ik f_k is 0 and every content block B_ik[:, C] is 0; the second is a "
      "membership test of (a^1_ik, .., a^H_ik, t_ik) in the kernel of one small matrix, "
      "reduced once. max |error| is the exact maximum over the box, attained at a vertex: "
      "|flag part| + sum |content coefficients|."};
  return t;
}

Table p4_table(const std::vector<studies::ScaleRow>& rows, const std::string& model_name,
               const Task& task, double base_beta) {
  Table t;
  t.name = "p4_beyond_double";
  std::ostringstream cap;
  cap << "P4: beyond double. Scale path A -> s A of " << model_name << " (" << task_string(task)
      << ", base beta = " << base_beta
      << "): certified loss at the vertex witness set and certified 1 - min BOS mass.";
  t.caption = cap.str();
  std::ostringstream cap_latex;
  cap_latex << "P4: beyond double. Scale path $A\\to sA$ of " << latex_escape(model_name) << " ("
            << latex_escape(task_string(task)) << ", base $\\beta = " << base_beta
            << "$): certified loss at the vertex witness set $W$ and certified "
               "$1-\\min a_{i0}$.";
  t.caption_latex = cap_latex.str();
  t.columns = {"s", stacked("loss at W CERTIFIED", "$\\max_W e(X)$", "CERTIFIED"),
               stacked("1 - min BOS CERTIFIED", "$1-\\min a_{i0}$", "CERTIFIED"),
               stacked("bits needed", "bits", "needed"), "digits"};
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

Table b1_table(const std::vector<studies::BoundRow>& rows) {
  Table t;
  t.name = "b1_worst_case_bound";
  t.landscape = true;
  t.caption =
      "B1: certified worst-case loss E by interval branch and bound over the content box "
      "(every trigger position, paper convention): lower <= E <= upper.";
  t.caption_latex =
      "B1: certified worst-case loss $E$ by interval branch and bound over the content box "
      "(every trigger position, paper convention): lower $\\le E\\le$ upper.";
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
      "CERTIFIED: outward-rounded intervals, each box in double intervals first where their "
      "rounding is below 2^-30 of the bound, else MPFI, starting at 128 bits and raised by 64 "
      "while rounding, not the box, limits the bound; bits: the MPFI precision at the end. "
      "Lower: a witness input "
      "evaluated in intervals. Upper: the largest bound over the live boxes (linear form in "
      "the content with enclosed attention, intersected with a centered form for "
      "content-dependent softmax scores). Flags-only scores (sink family) need one box per "
      "trigger."};
  return t;
}

Figure p1_figure(const std::vector<studies::PrecisionRow>& rows, const Task& task) {
  Figure f;
  f.name = "f1_sink_precision";
  f.caption = "F1: softmax sink family, " + task_string(task) +
              ": 1 - min BOS mass against beta (log-log), the certified value (line, the "
              "midpoint of the MPFI enclosure of P1) and as computed in float, double, "
              "Float128 and 257-bit MPFR (points). A precision that computes 1 - BOS mass as 0 (it "
              "can no longer tell the BOS mass from 1) has no point there.";
  f.evidence = "line CERTIFIED (enclosure width far below the line width); points NUMERIC(p)";
  f.columns = {"beta", "certified_mid"};
  if (!rows.empty()) {
    for (const auto& v : rows.front().deficit_numeric) f.columns.push_back(v.precision);
  }
  for (const auto& r : rows) {
    PrecisionScope scope(256);
    std::ostringstream beta;
    beta << r.beta;
    std::vector<std::string> cells{beta.str(), format_nearest(Mpfr(bmp::median(r.deficit)), 6)};
    for (const auto& v : r.deficit_numeric) {
      cells.push_back(v.value > 0 ? format_nearest(v.value, 6) : std::string("?"));
    }
    f.rows.push_back(std::move(cells));
  }
  // Where double fails: 1 - a_i0 = (L-1) / (e^beta + L-1) < 2^-53 once
  //   beta > beta_53 = ln((L-1) (2^53 - 1)),
  // and a double a_i0 rounds to 1 (1 - a_i0 computes as 0) from about there on.
  const double beta_53 = std::log((task.L - 1) * (std::ldexp(1.0, 53) - 1));
  std::ostringstream beta_text;
  beta_text.precision(3);
  beta_text << beta_53;
  f.caption += " The shaded region, beta > " + beta_text.str() +
               ", is where the certified 1 - min BOS mass is below 2^-53 (the dashed "
               "horizontal line): double cannot tell the BOS mass from 1 there.";
  f.caption_latex =
      "F1: softmax sink family, " + latex_escape(task_string(task)) +
      ": $1-\\min a_{i0}$ against $\\beta$ (log-log), the certified value (line, the "
      "midpoint of the MPFI enclosure of P1) and as computed in float, double, Float128 and "
      "257-bit MPFR (points). A precision that computes $1-a_{i0}$ as 0 (it can no longer tell "
      "the BOS mass from 1) has no point there. The shaded region, $\\beta > " +
      beta_text.str() +
      "$, is where the certified $1-\\min a_{i0}$ is below $2^{-53}$ (the dashed horizontal "
      "line): double cannot tell the BOS mass from 1 there.";
  f.plot =
      std::string(kLineColours) +
      "set logscale xy\nset format y '10^{%T}'\n"
      "set xlabel '{/Symbol b}'\nset ylabel '1 - min_i a_{i0} (1 - min BOS mass)'\n"
      "set xrange [4:400]\nset yrange [1e-145:1]\n"
      "set key top right opaque box\nset grid\n"
      "beta53 = " +
      studies::format_double(beta_53) +
      "\n"
      "set object 1 rectangle from first beta53, graph 0 to graph 1, graph 1 behind "
      "fillcolor rgb '#D55E00' fillstyle transparent solid 0.12 noborder\n"
      "set arrow 1 from first beta53, graph 0 to first beta53, graph 1 nohead linecolor rgb "
      "'#D55E00' dashtype 2\n"
      "set arrow 2 from graph 0, first 2**-53 to graph 1, first 2**-53 nohead linecolor rgb "
      "'#D55E00' dashtype 2\n"
      "set label 1 sprintf('double fails ({/Symbol b} > %.1f: 1 - a_{i0} < 2^{-53})', beta53) at "
      "first beta53*1.08, graph 0.06 left textcolor rgb '#D55E00'\n"
      "plot data using 1:2 with lines linecolor 7 linewidth 2 title 'CERTIFIED (MPFI)', \\\n"
      "  '' using 1:3 with points linecolor 1 pointtype 4 pointsize 1.4 title 'float (24)', "
      "\\\n"
      "  '' using 1:4 with points linecolor 2 pointtype 6 pointsize 1.4 title 'double (53)', "
      "\\\n"
      "  '' using 1:5 with points linecolor 3 pointtype 8 pointsize 1.4 title 'Float128 (113)', "
      "\\\n"
      "  '' using 1:6 with points linecolor 4 pointtype 2 pointsize 1.4 title 'MPFR (257)'\n";
  return f;
}

Table p2_table(const std::vector<studies::SearchModelRow>& rows, const std::string& models) {
  Table t;
  t.name = "p2_search_models";
  t.landscape = true;
  t.caption = "P2: the best single-layer softmax models of the Theorem 1 search (" + models +
              "): the loss the search found beside certified values at the vertex witness set, "
              "and the branch and bound's certified upper bound where it reaches.";
  t.columns = {stacked("file", "weight file", "(.weights.json)"),
               "n",
               "L",
               stacked("search loss SEARCH(lower bound)", "search $E$", "SEARCH(lower bound)"),
               stacked("loss at W CERTIFIED", "$\\max_W e$", "CERTIFIED"),
               stacked("1 - min BOS at W CERTIFIED", "$1-\\min_W a_{i0}$", "CERTIFIED"),
               stacked("E upper CERTIFIED", "$E\\leq$", "CERTIFIED"),
               stacked("loss at W, s = 16 CERTIFIED", "$\\max_W e$, $s=16$", "CERTIFIED")};
  t.alignment = "lrrrrrrr";
  for (const auto& r : rows) {
    PrecisionScope scope(128);  // holds a double exactly
    Cell upper("-");
    if (r.bounded) {
      upper = remark_cell(format_up(r.bound.upper, 3), r.bound.verdict == Verdict::kEnclosed
                                                           ? ""
                                                           : "(" + bound_status(r.bound) + ")");
    }
    // "1.361e-04", or "6.245e-17 (double 5.6e-16)" where the search's own
    // double value differs in the first digit
    const std::string loss = format_down(Mpfr(r.search.certified), 4);
    const std::string tail = r.search.double_disagrees
                                 ? " (double " + format_nearest(Mpfr(r.search.value), 2) + ")"
                                 : "";
    t.rows.push_back({file_cell(r.file), std::to_string(r.n), std::to_string(r.L),
                      Cell(loss + tail, latex_number(loss) + latex_escape(tail)),
                      interval_cell(r.witness.loss, 3), interval_cell(r.witness.deficit, 3), upper,
                      r.path.empty() ? Cell("-") : interval_cell(r.path.back().cert.loss, 3)});
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

Table p5_table(const studies::RefinedPath& path, const std::string& model_name, const Task& task,
               const studies::RefinedPathOptions& options) {
  Table t;
  t.name = "p5_refined_search_path";
  t.landscape = true;
  std::ostringstream cap;
  cap << "P5: beyond double for a search model, " << model_name << " (" << task_string(task)
      << "). At each step A is scaled to s times the start and (A, M) is re-solved by "
      << "Levenberg-Marquardt in " << path.bits << "-bit MPFR on a fit set F of " << path.fit_size
      << " sequences; the resulting model is certified at a check set W of " << path.check_size
      << " sequences.";
  t.caption = cap.str();
  const std::string numeric = "NUMERIC(" + std::to_string(path.bits) + ")";
  t.columns = {"s",
               stacked("LM evaluations", "LM", "evaluations"),
               Cell("max |A_pq|", "$\\max|A_{pq}|$"),
               stacked("max |r| on F " + numeric, "$\\max_F |r|$", numeric),
               stacked("loss at W CERTIFIED", "$\\max_W e(X)$", "CERTIFIED"),
               stacked("1 - min BOS at W CERTIFIED", "$1-\\min_W a_{i0}$", "CERTIFIED"),
               stacked("bits needed", "bits", "needed"),
               stacked("E upper CERTIFIED (gap, boxes)", "$E \\le$ CERTIFIED", "(gap, boxes)")};
  for (const auto& r : path.rows) {
    std::ostringstream s, a;
    s << r.scale;
    a.precision(4);
    a << r.max_abs_a;
    PrecisionScope scope(path.bits);
    t.rows.push_back(
        {s.str(), std::to_string(r.evaluations), a.str(),
         Cell(format_nearest(r.fit_max, 3), latex_number(format_nearest(r.fit_max, 3))),
         interval_cell(r.cert.loss, 4), interval_cell(r.cert.deficit, 4),
         std::to_string(r.cert.bits), bound_cell(r)});
  }
  std::ostringstream sets;
  sets << "F: per trigger content all +1, all -1 and " << options.fit_vertices
       << " random vertices, plus " << options.fit_samples << " uniform sequences (seed "
       << options.seed << "). W: per trigger "
       << (studies::check_set_has_every_vertex(task)
               ? "every vertex of the content box"
               : "content all +1, all -1 and 64 random vertices")
       << ", plus " << options.check_samples << " uniform sequences (seed " << options.seed + 1
       << ").";
  t.notes = {sets.str(),
             "CERTIFIED: outward-rounded MPFI enclosures of the refined model (its MPFR entries "
             "exactly) at the adaptive precision given. The loss at W is a certified lower bound "
             "on the worst-case loss E over the whole box; the upper bound on E is the interval "
             "branch and bound over the whole box (at bits needed + 64), with its relative gap "
             "to the certified lower end and the boxes it took (\"budget\": stopped by its time "
             "budget, the bound still holds).",
             "NUMERIC(p): the refinement's own residual, uncertified.",
             "max |A_pq| is not a measure of sharpness: every token has exactly one flag "
             "(x[0] + x[1] + x[n-1] = 1), so adding c to A[p][0], A[p][1] and A[p][n-1] shifts "
             "all scores of a query row alike and leaves the softmax unchanged; the refinement "
             "drifts along this null direction."};
  return t;
}

namespace {

// "[lo, hi]" of a whole-box enclosure, lo rounded down and hi up, with the
// relative gap and the boxes; "-" when not run.
Cell whole_box_cell(bool run, const Mpfr& lo, const Mpfr& hi, double gap, long boxes,
                    bool exhausted) {
  if (!run) return Cell("-");
  std::ostringstream text;
  text.precision(2);
  text << "[" << format_down(lo, 4) << ", " << format_up(hi, 4) << "] (gap " << gap << ", " << boxes
       << (exhausted ? ", budget" : "") << ")";
  return Cell(text.str(), latex_escape(text.str()));
}

std::string seconds_text(double s) {
  std::ostringstream t;
  t.precision(1);
  t << std::fixed << s;
  return t.str();
}

}  // namespace

Table p5_paper_size_table(const std::vector<studies::NamedRefinedPath>& paths, const Task& task,
                          const studies::RefinedPathOptions& options, const std::string& load) {
  Table t;
  t.name = "p5_refined_paper_size";
  t.landscape = true;
  std::ostringstream cap;
  cap << "P5 at the paper's size: the Theorem 1 study's path models (" << task_string(task)
      << ") projected onto the structure in which the trigger row averages exactly (A's "
      << "content-key entries in the trigger and content query rows 0, trigger key = "
      << "ordinary key, M = I - e_0 e_0^T), then A -> s A; each model certified at a check set "
      << "W and over the whole content box.";
  t.caption = cap.str();
  t.columns = {"model",
               "s",
               "max |A_pq|",
               "max |r| on F NUMERIC",
               "loss at W CERTIFIED",
               "E whole box CERTIFIED (gap, boxes)",
               "1 - min BOS whole box CERTIFIED (gap, boxes)",
               "bits (W / E / BOS)",
               "wall s",
               "CPU s"};
  t.alignment = kP5PaperSizeAlignment;
  for (const studies::NamedRefinedPath& np : paths) {
    for (const studies::RefinedPathRow& r : np.path.rows) {
      PrecisionScope scope(std::max(np.path.bits, 2 * r.cert.bits + 256));
      std::ostringstream s, a, bits;
      s << r.scale;
      a.precision(4);
      a << r.max_abs_a;
      bits << r.cert.bits << " / " << (r.bounded ? r.bound.bits : 0) << " / "
           << (r.bos_bounded ? r.bos.bits : 0);
      t.rows.push_back(
          {Cell(np.name, latex_escape(np.name)), s.str(), a.str(),
           Cell(format_nearest(r.fit_max, 3), latex_number(format_nearest(r.fit_max, 3))),
           interval_cell(r.cert.loss, 4),
           whole_box_cell(r.bounded, r.bound.lower, r.bound.upper, r.bound.relative_gap,
                          r.bound.boxes, r.bound.budget_exhausted),
           whole_box_cell(r.bos_bounded, r.bos.deficit_lower, r.bos.deficit_upper,
                          r.bos.relative_gap, r.bos.boxes, r.bos.budget_exhausted),
           bits.str(), seconds_text(r.seconds), seconds_text(r.cpu_seconds)});
    }
  }
  std::ostringstream sets;
  sets << "F: per trigger content all +1, all -1 and " << options.fit_vertices
       << " random vertices, plus " << options.fit_samples << " uniform sequences (seed "
       << options.seed << "); the max |r| on F is NUMERIC at the path's MPFR precision. W: per "
       << "trigger content all +1, all -1 and 64 random vertices, plus " << options.check_samples
       << " uniform sequences (seed " << options.seed + 1 << ").";
  t.notes = {
      sets.str(),
      "CERTIFIED: outward-rounded MPFI about exactly the model of the row (committed beside "
      "the table as p5_paper_size_*.weights.json, every entry exact). E: the interval branch "
      "and bound over the whole box (theorems/bounds/worst_case_bound.h); 1 - min BOS: the BOS "
      "branch "
      "and bound (theorems/bounds/bos_bound.h); lower ends are witness inputs, upper ends hold "
      "over "
      "the whole box even when the budget ran out ('budget').",
      "On the projected models e(X) <= max(a_j0, max_{i != j} (1 - a_i0)): the loss is the "
      "sink's leakage alone and falls like exp(-s margin).",
      "wall s, CPU s: the step (projection or scaling, F, W, both bounds), one thread, at "
      "load average " +
          load + " on two cores."};
  return t;
}

}  // namespace sinkcert::theorems::reports
