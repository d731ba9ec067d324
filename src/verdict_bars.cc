// SPDX-License-Identifier: MIT
//
// The solves and sinks verdicts against their bars (verdict_bars.h).
#include "src/verdict_bars.h"

#include <functional>
#include <stdexcept>

#include "src/json_reader.h"
#include "src/table_writer.h"

namespace sinkcert {

namespace {

// Significant digits of a printed end: 4 as a rule, more while the rounded
// text would contradict the comparison printed beside it (a bar written
// with more digits, an end next to the bar); kMaxDigits digits hold any
// end of a double or of a bound at up to 1024 bits closely enough for that.
constexpr int kFirstDigits = 4;
constexpr int kMaxDigits = 320;

// x rounded up (or down) to the fewest digits >= kFirstDigits whose value
// still satisfies `holds`; the exact value when no rounding does.
std::string end_text(const Mpfr& x, bool up, const std::function<bool(const Rational&)>& holds) {
  if (bmp::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (bmp::isnan(x)) return "nan";
  for (int digits = kFirstDigits; digits <= kMaxDigits; digits *= 2) {
    const std::string text = up ? format_up(x, digits) : format_down(x, digits);
    if (holds(internal::parse_decimal(text))) return text;
  }
  return internal::exact_decimal(scalar_cast<Rational>(x));
}

std::string up_text(const Mpfr& x) {
  return end_text(x, true, [](const Rational&) { return true; });
}
std::string down_text(const Mpfr& x) {
  return end_text(x, false, [](const Rational&) { return true; });
}

Rational parse_bar(const std::string& text, const std::string& range,
                   const std::function<bool(const Rational&)>& in_range) {
  const std::string expected = "expected a decimal number " + range + ", got '" + text + "'";
  Rational value;
  try {
    value = internal::parse_user_decimal(text);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(expected);
  }
  if (!in_range(value)) throw std::invalid_argument(expected);
  return value;
}

Rational parse_named(const std::string& name, const std::string& text,
                     Rational (*parse)(const std::string&)) {
  try {
    return parse(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(name + ": " + e.what());
  }
}

}  // namespace

Rational parse_tolerance(const std::string& text) {
  return parse_bar(text, ">= 0 (e.g. 5e-3)", [](const Rational& x) { return x >= 0; });
}

Rational parse_sink_bar(const std::string& text) {
  return parse_bar(text, "in (0, 1] (e.g. 0.5)", [](const Rational& x) { return x > 0 && x <= 1; });
}

VerdictBars::VerdictBars() : VerdictBars(kDefaultTolerance, kDefaultSinkBar) {}

VerdictBars::VerdictBars(const std::string& tolerance_, const std::string& sink_bar_)
    : tolerance(parse_named("tolerance", tolerance_, parse_tolerance)),
      tolerance_text(tolerance_),
      sink_bar(parse_named("sink bar", sink_bar_, parse_sink_bar)),
      sink_bar_text(sink_bar_) {}

std::string VerdictBars::tolerance_words() const { return tolerance_text + " (tolerance)"; }
std::string VerdictBars::sink_bar_words() const { return sink_bar_text + " (sink bar)"; }

BarVerdict solves_verdict(const Mpfr& lower, const Mpfr& upper, const std::string& evidence,
                          const VerdictBars& bars) {
  const Rational& t = bars.tolerance;
  if (!bmp::isinf(upper) && exact_compare(upper, t) <= 0) {
    return {Decision::kYes, "solves the task: E <= " +
                                end_text(upper, true, [&](const Rational& u) { return u <= t; }) +
                                " <= " + bars.tolerance_words() + ", " + evidence};
  }
  if (exact_compare(lower, t) > 0) {
    return {Decision::kNo, "does not solve the task: E >= " +
                               end_text(lower, false, [&](const Rational& l) { return l > t; }) +
                               " > " + bars.tolerance_words() + ", " + evidence};
  }
  return {Decision::kUndecided, "undecided whether it solves the task: E in [" + down_text(lower) +
                                    ", " + up_text(upper) + "], which contains " +
                                    bars.tolerance_words() + ", " + evidence};
}

BarVerdict solves_verdict(const Rational& e, const VerdictBars& bars) {
  const std::string value = internal::exact_decimal(e);
  if (e <= bars.tolerance) {
    return {Decision::kYes,
            "solves the task: E = " + value + " <= " + bars.tolerance_words() + ", EXACT"};
  }
  return {Decision::kNo,
          "does not solve the task: E = " + value + " > " + bars.tolerance_words() + ", EXACT"};
}

BarVerdict sinks_verdict(const Mpfr& lower, const Mpfr& upper, const std::string& witness,
                         const VerdictBars& bars) {
  const Rational& b = bars.sink_bar;
  if (exact_compare(lower, b) >= 0) {
    return {Decision::kYes, "sinks on every input: min BOS >= " +
                                end_text(lower, false, [&](const Rational& l) { return l >= b; }) +
                                " >= " + bars.sink_bar_words() + ", CERTIFIED"};
  }
  if (!bmp::isinf(upper) && exact_compare(upper, b) < 0) {
    return {Decision::kNo, "does not sink on every input: BOS mass <= " +
                               end_text(upper, true, [&](const Rational& u) { return u < b; }) +
                               " < " + bars.sink_bar_words() + " at the witness (" + witness +
                               "), CERTIFIED"};
  }
  return {Decision::kUndecided, "undecided whether it sinks on every input: min BOS in [" +
                                    down_text(lower) + ", " + up_text(upper) +
                                    "], which contains " + bars.sink_bar_words() + ", CERTIFIED"};
}

BarVerdict sinks_anywhere_verdict(const Mpfr& lower, const Mpfr& upper, const std::string& witness,
                                  const VerdictBars& bars) {
  const Rational& b = bars.sink_bar;
  if (!bmp::isinf(upper) && exact_compare(upper, b) < 0) {
    return {Decision::kNo, "does not sink on any input: max BOS <= " +
                               end_text(upper, true, [&](const Rational& u) { return u < b; }) +
                               " < " + bars.sink_bar_words() + ", CERTIFIED"};
  }
  if (!witness.empty() && exact_compare(lower, b) >= 0) {
    return {Decision::kYes, "sinks at the witness (" + witness + "): BOS mass >= " +
                                end_text(lower, false, [&](const Rational& l) { return l >= b; }) +
                                " >= " + bars.sink_bar_words() + ", CERTIFIED"};
  }
  return {Decision::kUndecided,
          "undecided whether it sinks on some input: max BOS in [" +
              (witness.empty() && bmp::isinf(lower) ? std::string("-inf") : down_text(lower)) +
              ", " + up_text(upper) + "], which contains " + bars.sink_bar_words() + ", CERTIFIED"};
}

BarVerdict probe_sinks_verdict(double largest_mean, const std::string& where,
                               const std::string& why, const VerdictBars& bars) {
  const std::string rests = ", NUMERIC(53); not certified on every input (" + why + ")";
  if (!(largest_mean == largest_mean)) {
    return {Decision::kUndecided,
            "undecided whether it sinks on the probe set: no finite mean" + rests};
  }
  const Rational& b = bars.sink_bar;
  const Mpfr mean(largest_mean);  // exact: a double
  if (Rational(largest_mean) >= b) {
    return {Decision::kYes, "sinks on the probe set: mean BOS " +
                                end_text(mean, false, [&](const Rational& l) { return l >= b; }) +
                                " >= " + bars.sink_bar_words() + " in " + where + rests};
  }
  return {Decision::kNo, "does not sink on the probe set: mean BOS <= " +
                             end_text(mean, true, [&](const Rational& u) { return u < b; }) +
                             " < " + bars.sink_bar_words() + " in every head (largest in " + where +
                             ")" + rests};
}

}  // namespace sinkcert
