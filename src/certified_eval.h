// SPDX-License-Identifier: MIT
//
// Certified evaluation at adaptive precision (CAPD style).
//
// An enclosure X = [lo, hi] certifies
//   digits(X) = floor(-log10((hi - lo) / min(|lo|, |hi|)))
// relative decimal digits when 0 is not in X (a point [v, v] certifies all
// of them, reported as kExactDigits; an interval straddling 0 certifies none).
// An approximation v of a value enclosed by X has
//   correct_digits(v, X) = floor(-log10(max(|v - lo|, |v - hi|) / min(|lo|, |hi|)))
// correct digits, at most digits(X) (the enclosure cannot vouch for more).
//
// Adaptive precision: evaluate every requested quantity in MPFI at p bits,
// p = start, start + 64, ..., up to a cap, and stop at the first p where
// every quantity certifies the requested digits. The result reports the
// precision that was used at the last attempt (the bits Boost allocated for
// p, e.g. 257 for 256; see scalar_traits.h), which is the precision needed
// when the digits were reached. Intervals keep the precision they were
// created with when copied out of the scope (Boost copies preserve mpfi
// precision).
//
// For a model on one input (certify_forward):
//   outputs f(X)_{i,d},  e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}|,
//   BOS deficit 1 - a_i0 at every non-trigger position i >= 1 of every head,
// and the requested digits are demanded of e(X) and every BOS deficit (the
// numbers the tables quote); outputs are reported at the final precision.
// The location of e(X) is the term whose enclosure has the largest upper
// end, compared as MPFR values (linf_error.h), so it is right below 1e-308.
// The model and the input may be doubles or exact rationals (the model a
// weight file denotes); each entry is enclosed in MPFI at the working
// precision of every attempt (exactly when it is a double).
//
// The report (to_json, summary_text) prints each enclosure [lo, hi] with
// min(digits + 2, 60) significant digits (two guard digits beyond those
// demanded), lo rounded down and hi rounded up, so it still encloses.
#pragma once

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/model.h"
#include "src/scalar_traits.h"

namespace sinkcert {

// digits(X) of a point enclosure [v, v].
constexpr int kExactDigits = 100000;

int certified_digits(const Mpfi& x);
int correct_digits(const Mpfr& approximation, const Mpfi& truth);

struct AdaptiveOptions {
  int digits = 10;      // relative decimal digits demanded of every quantity
  int start_bits = 64;  // first MPFI precision tried
  int step_bits = 64;   // raise by this much while undecided
  int max_bits = 4096;  // cap
};

struct AdaptiveResult {
  std::vector<Mpfi> values;  // enclosures at the final precision
  int bits = 0;              // precision used last, in bits (= needed when reached)
  int digits = 0;            // min over values of certified_digits
  bool reached = false;      // every value certifies options.digits
  int attempts = 0;
};

// Calls `evaluate` (which computes its enclosures in the current
// PrecisionScope) at rising precision until all certify options.digits.
AdaptiveResult certify_adaptively(const std::function<std::vector<Mpfi>()>& evaluate,
                                  const AdaptiveOptions& options);

struct CertifiedEvaluation {
  Matrix<Mpfi> output;                           // L x n
  Mpfi linf_error;                               // e(X)
  int error_position = 0, error_coordinate = 0;  // where e(X) is attained
  // bos_deficit[l][h][i] = 1 - a_i0, i = 0..L-1 (the trigger's and position
  // 0's entries are computed but not part of max_bos_deficit).
  std::vector<std::vector<std::vector<Mpfi>>> bos_deficit;
  // max over non-trigger i >= 1 of 1 - a_i0, per layer and head.
  std::vector<std::vector<Mpfi>> max_bos_deficit;
  int bits = 0;  // MPFI precision used at the last attempt, in bits
  int digits = 0;
  bool reached = false;
  AdaptiveOptions options;  // the digits demanded and the precision schedule
  int trigger = 0;          // the input's trigger position
};

// Enclosures of the model on X (trigger at `trigger`) with options.digits
// certified in e(X) and every BOS deficit, at the lowest multiple-of-step
// precision that achieves it. Softmax, relu, sigmoid, every model kind.
// Instantiated for ModelScalar, InputScalar in {double, Rational}.
template <class ModelScalar, class InputScalar>
CertifiedEvaluation certify_forward(const Model<ModelScalar>& model, const Matrix<InputScalar>& X,
                                    int trigger, const AdaptiveOptions& options);

// Significant digits the report prints per enclosure: options.digits + 2, at
// most kMaxShownDigits.
constexpr int kMaxShownDigits = 60;
int shown_digits(const CertifiedEvaluation& e);
// "CERTIFIED", or "CERTIFIED (fewer digits than requested)" when the cap was
// reached first.
std::string evidence_label(const CertifiedEvaluation& e);
// {"evidence": "CERTIFIED", "digits_requested", "digits_certified",
//  "reached", "precision_bits", "linf_error": "[lo, hi]", "error_position",
//  "error_coordinate", "bos_deficit": [{"layer", "head", "one_minus_bos":
//  [per position i = 0..L-1], "max_over_non_trigger"}]}
nlohmann::json to_json(const CertifiedEvaluation& e);
// The text report: the precision needed, e(X) and where, and per head
// 1 - a_i0 at every position i >= 1 (the trigger marked) and its maximum
// over non-trigger positions. One line each, ending in a newline.
std::string summary_text(const CertifiedEvaluation& e);

}  // namespace sinkcert
