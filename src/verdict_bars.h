// SPDX-License-Identifier: MIT
//
// What "solves the task" and "sinks" mean (docs/definitions.md, Definitions
// 7), for every command that says it (check, verify bound, verify bos) and
// the Python package. Two bars, each an exact decimal:
//
//   solves the task       <=>  E <= tolerance
//                               (E: the worst-case l_inf error over the
//                               content box; default 5e-3, the paper's
//                               training target)
//   sinks on every input  <=>  min over the content box of a_i0 >= sink bar
//                               at every non-trigger row i of the heads the
//                               bound covers (default 0.5: BOS holds at least
//                               half of every such row's attention)
//
// A verdict is decided from an enclosure of the quantity, never from a
// point value: "solves" needs the upper end of E at or below the tolerance,
// "does not solve" the lower end above it, anything between is undecided;
// likewise for the min BOS mass against the sink bar. The ends are compared
// with the bar exactly (an MPFR or double end is a dyadic rational;
// mpfr_cmp_q), so no rounding of the bar can flip a verdict. Where no
// certified BOS bound is available the sink verdict says what it rests on
// instead: the probe-set mean of a_i0, NUMERIC(53), "sinks on the probe
// set", a weaker statement than "on every input".
//
// Every verdict text prints the word, the bound it rests on, the bar as it
// was written and its name, and the evidence, e.g.
//   solves the task: E <= 4.405e-03 <= 5e-3 (tolerance), CERTIFIED
//   does not solve the task: E >= 0.04310 > 5e-3 (tolerance), CERTIFIED
//   undecided whether it solves the task: E in [1e-03, 0.01] contains 5e-3 (tolerance), CERTIFIED
//   sinks on every input: min BOS >= 0.9999 >= 0.5 (sink bar), CERTIFIED
// The printed ends are rounded outward (lower down, upper up) with as many
// digits as the comparison printed beside them needs to stay true.
#pragma once

#include <string>

#include "src/scalar_traits.h"

namespace sinkcert {

// The defaults, as written in the help, the reports and docs/definitions.md.
inline constexpr const char* kDefaultTolerance = "5e-3";
inline constexpr const char* kDefaultSinkBar = "0.5";

struct VerdictBars {
  VerdictBars();  // the defaults
  // Parses both texts (parse_tolerance, parse_sink_bar); throws
  // std::invalid_argument naming "tolerance" or "sink bar".
  VerdictBars(const std::string& tolerance, const std::string& sink_bar);
  Rational tolerance;
  std::string tolerance_text;  // as written
  Rational sink_bar;
  std::string sink_bar_text;  // as written
  // "5e-3 (tolerance)", "0.5 (sink bar)"
  std::string tolerance_words() const;
  std::string sink_bar_words() const;
};

// The exact value of a decimal tolerance >= 0 / sink bar in (0, 1] (the
// command line's notation, src/json_reader.h, parse_user_decimal, as for a
// claim); std::invalid_argument
// "expected a decimal number ..., got '<text>'" otherwise.
Rational parse_tolerance(const std::string& text);
Rational parse_sink_bar(const std::string& text);

enum class Decision { kYes, kNo, kUndecided };

// A verdict: the decision and its one-line text (header).
struct BarVerdict {
  Decision decision = Decision::kUndecided;
  std::string text;
};

// E in [lower, upper] (upper may be +inf) with the evidence of the ends.
BarVerdict solves_verdict(const Mpfr& lower, const Mpfr& upper, const std::string& evidence,
                          const VerdictBars& bars);
// E known exactly (EXACT): "solves the task: E = 0 <= 5e-3 (tolerance), EXACT".
BarVerdict solves_verdict(const Rational& e, const VerdictBars& bars);

// min BOS in [lower, upper], certified over the content box; `witness`
// names where the upper end was reached ("head 0, row 3, trigger 2").
BarVerdict sinks_verdict(const Mpfr& lower, const Mpfr& upper, const std::string& witness,
                         const VerdictBars& bars);
// max BOS in [lower, upper] over the content box (a BOS cap): "does not sink
// anywhere" below the bar, "sinks at the witness" when the lower end (at
// `witness`) reaches it.
BarVerdict sinks_anywhere_verdict(const Mpfr& lower, const Mpfr& upper, const std::string& witness,
                                  const VerdictBars& bars);
// No certified bound (`why`): the largest probe-set mean of a_i0 over the
// heads, reached at `where` ("layer 0 head 1"), NUMERIC(53).
BarVerdict probe_sinks_verdict(double largest_mean, const std::string& where,
                               const std::string& why, const VerdictBars& bars);

}  // namespace sinkcert
