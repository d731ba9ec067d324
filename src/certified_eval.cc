// SPDX-License-Identifier: MIT
#include "src/certified_eval.h"

#include <mpfr.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "src/evidence.h"
#include "src/forward.h"
#include "src/interval.h"
#include "src/linf_error.h"
#include "src/table_writer.h"
#include "src/task.h"

namespace sinkcert {

namespace {

// floor(-log10(r)) for a positive ratio r given as an Mpfr, clamped to
// [0, kExactDigits].
int digits_of_ratio(const Mpfr& ratio) {
  if (ratio <= 0) return kExactDigits;
  // -log10(r), evaluated in MPFR because r may be far below double's range
  const Mpfr d = -bmp::log10(ratio);
  if (d <= 0) return 0;
  if (d >= kExactDigits) return kExactDigits;
  return static_cast<int>(bmp::floor(d).convert_to<long>());
}

// Binary precision of a value (Boost reports decimal digits).
int bits_of(const Mpfr& x) { return static_cast<int>(mpfr_get_prec(x.backend().data())); }

}  // namespace

int certified_digits(const Mpfi& x) {
  const Mpfr lo = lower_of(x), hi = upper_of(x);
  if (bmp::isnan(lo) || bmp::isnan(hi)) return 0;  // an invalid enclosure certifies nothing
  if (lo == hi) return kExactDigits;
  if (contains_zero(x)) return 0;
  // (hi - lo) / min(|lo|, |hi|), rounded up so the digits are not overstated
  PrecisionScope scope(std::max(64, 2 * bits_of(lo)));
  const Mpfr width = hi - lo;
  return digits_of_ratio(width / mignitude_of(x));
}

int correct_digits(const Mpfr& approximation, const Mpfi& truth) {
  const Mpfr lo = lower_of(truth), hi = upper_of(truth);
  if (bmp::isnan(lo) || bmp::isnan(hi) || bmp::isnan(approximation)) return 0;
  if (contains_zero(truth)) {
    return (lo == 0 && hi == 0 && approximation == 0) ? kExactDigits : 0;
  }
  PrecisionScope scope(std::max(64, 2 * std::max(bits_of(lo), bits_of(approximation))));
  // max(|v - lo|, |v - hi|) / min(|lo|, |hi|)
  const Mpfr a = bmp::abs(Mpfr(approximation - lo)), b = bmp::abs(Mpfr(approximation - hi));
  const int digits = digits_of_ratio((a > b ? a : b) / mignitude_of(truth));
  return std::min(digits, certified_digits(truth));
}

AdaptiveResult certify_adaptively(const std::function<std::vector<Mpfi>()>& evaluate,
                                  const AdaptiveOptions& options) {
  if (options.start_bits < 2 || options.step_bits < 1 || options.max_bits < options.start_bits) {
    throw std::invalid_argument("adaptive precision: need 2 <= start <= cap and step >= 1");
  }
  AdaptiveResult result;
  for (int bits = options.start_bits;; bits += options.step_bits) {
    if (bits > options.max_bits) break;
    PrecisionScope scope(bits);
    result.values = evaluate();
    result.bits = PrecisionScope::current_bits();
    ++result.attempts;
    int digits = kExactDigits;
    for (const Mpfi& v : result.values) digits = std::min(digits, certified_digits(v));
    result.digits = digits;
    if (digits >= options.digits) {
      result.reached = true;
      break;
    }
  }
  return result;
}

template <class ModelScalar, class InputScalar>
CertifiedEvaluation certify_forward(const Model<ModelScalar>& model, const Matrix<InputScalar>& X,
                                    int trigger, const AdaptiveOptions& options) {
  const int L = static_cast<int>(X.rows());
  CertifiedEvaluation out;
  auto evaluate = [&]() {
    // enclosed at this attempt's precision (exact for doubles)
    const Model<Mpfi> m = model.template cast<Mpfi>();
    const Matrix<Mpfi> Xi = matrix_cast<Mpfi>(X);
    auto r = forward(m, Xi);
    const Matrix<Mpfi> Y = make_target(Xi, trigger, target_kind_of(model.kind));
    const LinfError<Mpfi> e = linf_error(r.output, Y);
    out.output = r.output;
    out.linf_error = e.value;
    out.error_position = e.position;
    out.error_coordinate = e.coordinate;
    out.bos_deficit.assign(r.attention.size(), {});
    out.max_bos_deficit.assign(r.attention.size(), {});
    std::vector<Mpfi> quantities{e.value};
    for (std::size_t l = 0; l < r.attention.size(); ++l) {
      for (const Matrix<Mpfi>& a : r.attention[l]) {
        std::vector<Mpfi> deficit(L);
        Mpfi worst(0);
        bool first = true;
        for (int i = 0; i < L; ++i) {
          // 1 - a_i0
          deficit[i] = Mpfi(1) - a(i, 0);
          if (i == 0 || i == trigger) continue;
          quantities.push_back(deficit[i]);
          worst = first ? deficit[i] : max_of(worst, deficit[i]);
          first = false;
        }
        out.bos_deficit[l].push_back(std::move(deficit));
        out.max_bos_deficit[l].push_back(worst);
      }
    }
    return quantities;
  };
  const AdaptiveResult r = certify_adaptively(evaluate, options);
  out.options = options;
  out.trigger = trigger;
  out.bits = r.bits;
  out.digits = r.digits;
  out.reached = r.reached;
  return out;
}

int shown_digits(const CertifiedEvaluation& e) {
  return std::min(e.options.digits + 2, kMaxShownDigits);
}

std::string evidence_label(const CertifiedEvaluation& e) {
  const std::string label = Evidence::certified(e.bits).label();
  return e.reached ? label : label + " (fewer digits than requested)";
}

nlohmann::json to_json(const CertifiedEvaluation& e) {
  const int shown = shown_digits(e);
  nlohmann::json doc;
  doc["evidence"] = Evidence::certified(e.bits).label();
  doc["digits_requested"] = e.options.digits;
  doc["digits_certified"] = e.digits;
  doc["reached"] = e.reached;
  doc["precision_bits"] = e.bits;
  doc["linf_error"] = format_interval(e.linf_error, shown);
  doc["error_position"] = e.error_position;
  doc["error_coordinate"] = e.error_coordinate;
  nlohmann::json deficits = nlohmann::json::array();
  for (std::size_t l = 0; l < e.bos_deficit.size(); ++l) {
    for (std::size_t h = 0; h < e.bos_deficit[l].size(); ++h) {
      nlohmann::json per = nlohmann::json::array();
      for (const Mpfi& d : e.bos_deficit[l][h]) per.push_back(format_interval(d, shown));
      deficits.push_back(
          {{"layer", l},
           {"head", h},
           {"one_minus_bos", per},
           {"max_over_non_trigger", format_interval(e.max_bos_deficit[l][h], shown)}});
    }
  }
  doc["bos_deficit"] = deficits;
  return doc;
}

std::string summary_text(const CertifiedEvaluation& e) {
  const int shown = shown_digits(e);
  const std::string label = evidence_label(e);
  std::ostringstream out;
  out << "precision: mpfi, adaptive from " << e.options.start_bits << " bits (+"
      << e.options.step_bits << "): " << e.bits << " bits needed for " << e.options.digits
      << " digits; " << e.digits << " certified" << (e.reached ? "" : " (cap reached: UNDECIDED)")
      << "\n";
  out << "l_inf error e(X) in " << format_interval(e.linf_error, shown) << " [" << label
      << "] at position " << e.error_position << ", coordinate " << e.error_coordinate << "\n";
  for (std::size_t l = 0; l < e.bos_deficit.size(); ++l) {
    for (std::size_t h = 0; h < e.bos_deficit[l].size(); ++h) {
      out << "layer " << l << " head " << h << ": 1 - a_i0 [" << label << "]\n";
      for (std::size_t i = 1; i < e.bos_deficit[l][h].size(); ++i) {
        out << "  position " << i << (static_cast<int>(i) == e.trigger ? " (trigger)" : "") << ": "
            << format_interval(e.bos_deficit[l][h][i], shown) << "\n";
      }
      out << "  max over non-trigger positions (1 - min BOS mass): "
          << format_interval(e.max_bos_deficit[l][h], shown) << "\n";
    }
  }
  return out.str();
}

template CertifiedEvaluation certify_forward(const Model<double>&, const Matrix<double>&, int,
                                             const AdaptiveOptions&);
template CertifiedEvaluation certify_forward(const Model<double>&, const Matrix<Rational>&, int,
                                             const AdaptiveOptions&);
template CertifiedEvaluation certify_forward(const Model<Rational>&, const Matrix<double>&, int,
                                             const AdaptiveOptions&);
template CertifiedEvaluation certify_forward(const Model<Rational>&, const Matrix<Rational>&, int,
                                             const AdaptiveOptions&);

}  // namespace sinkcert
