// SPDX-License-Identifier: MIT
//
// One model on one input, everything a user needs to compare with another
// implementation (PyTorch, numpy): outputs f(X), every attention matrix,
// the target y (plain or residual by model kind) and
//   e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}|   with its position and coordinate.
// Printing: a p-bit binary number round-trips through
//   digits(p) = 1 + ceil(p log10 2)
// significant decimal digits (17 for double), which format_decimal uses.
// Non-finite values are never hidden: a NaN term is the l_inf error and its
// location (linf_error.h), find_non_finite reports the first NaN or infinity
// of a forward pass, and both the text and the JSON forms write them as
// "NaN", "Infinity" and "-Infinity" (JSON has no such numbers; nlohmann
// would write null).
#pragma once

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>

#include "src/forward.h"
#include "src/linf_error.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert {

template <class T>
struct Evaluation {
  int trigger = 0;
  ForwardResult<T> result;  // output and attention[layer][head]
  Matrix<T> target;
  LinfError<T> error;
};

template <class T>
Evaluation<T> evaluate(const Model<T>& m, const Matrix<T>& X, int trigger) {
  Evaluation<T> e;
  e.trigger = trigger;
  e.result = forward(m, X);
  e.target = make_target(X, trigger, target_kind_of(m.kind));
  e.error = linf_error(e.result.output, e.target);
  return e;
}

// "NaN", "Infinity" or "-Infinity" if x is not finite (for an interval: an
// end is NaN, or an end is infinite), else "".
template <class T>
std::string non_finite_name(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (std::isnan(x)) return "NaN";
    if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
    return "";
  } else if constexpr (ScalarTraits<T>::kIsExact) {
    (void)x;
    return "";
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    if (is_nan(x)) return "NaN";
    const auto hi = upper_of(x), lo = lower_of(x);
    if (hi == interval_detail::plus_infinity<T>()) return "Infinity";
    if (lo == -interval_detail::plus_infinity<T>()) return "-Infinity";
    return "";
  } else if constexpr (std::is_same_v<T, Mpfr> || std::is_same_v<T, Float128>) {
    // in the type itself: MPFR's exponent range is far wider than double's
    if (boost::multiprecision::isnan(x)) return "NaN";
    if (boost::multiprecision::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
    return "";
  } else {
    return non_finite_name(x.a);  // ceres::Jet: its value
  }
}

// The first non-finite value of an evaluation: where ("output" or
// "attention layer l head h"), its row and column, and its name.
struct NonFiniteValue {
  enum class Site { kOutput, kAttention };  // row, col: position, coordinate / i, k
  Site site = Site::kOutput;
  std::string where;
  int row = 0, col = 0;
  std::string value;  // "NaN", "Infinity" or "-Infinity"

  // "the output at position 3, coordinate 0",
  // "the attention layer 0 head 0 at row 2, column 1"
  std::string location() const {
    const bool output = site == Site::kOutput;
    return "the " + where + (output ? " at position " : " at row ") + std::to_string(row) +
           (output ? ", coordinate " : ", column ") + std::to_string(col);
  }
};

template <class T>
std::optional<NonFiniteValue> find_non_finite(const Matrix<T>& m, NonFiniteValue::Site site,
                                              const std::string& where) {
  for (int i = 0; i < m.rows(); ++i) {
    for (int k = 0; k < m.cols(); ++k) {
      const std::string name = non_finite_name(m(i, k));
      if (!name.empty()) return NonFiniteValue{site, where, i, k, name};
    }
  }
  return std::nullopt;
}

// Output first (row i = position, column = coordinate), then every
// attention matrix; nullopt when every value is finite.
template <class T>
std::optional<NonFiniteValue> find_non_finite(const Evaluation<T>& e) {
  if (auto v = find_non_finite(e.result.output, NonFiniteValue::Site::kOutput, "output")) return v;
  for (std::size_t l = 0; l < e.result.attention.size(); ++l) {
    for (std::size_t h = 0; h < e.result.attention[l].size(); ++h) {
      const std::string where =
          "attention layer " + std::to_string(l) + " head " + std::to_string(h);
      if (auto v =
              find_non_finite(e.result.attention[l][h], NonFiniteValue::Site::kAttention, where)) {
        return v;
      }
    }
  }
  return std::nullopt;
}

// Significant decimal digits that round-trip a p-bit binary float.
inline int decimal_digits_for_bits(int bits) {
  // digits(p) = 1 + ceil(p log10 2)
  return 1 + static_cast<int>(std::ceil(bits * std::log10(2.0)));
}

// x with `digits` significant digits ("%.*g" style); "NaN", "Infinity",
// "-Infinity" if x is not finite.
template <class T>
std::string format_decimal(const T& x, int digits) {
  if (std::string name = non_finite_name(x); !name.empty()) return name;
  if constexpr (std::is_same_v<T, double>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    return buf;
  } else {
    return x.str(digits, std::ios_base::fmtflags(0));
  }
}

// A number for a JSON document: a JSON number for double (nlohmann writes
// the shortest decimal that reads back to the same double), otherwise a
// decimal string with `digits` significant digits (JSON numbers are doubles).
// A non-finite value is the string "NaN", "Infinity" or "-Infinity".
template <class T>
nlohmann::json json_number(const T& x, int digits) {
  if (std::string name = non_finite_name(x); !name.empty()) return name;
  if constexpr (std::is_same_v<T, double>) {
    (void)digits;
    return x;
  } else {
    return format_decimal(x, digits);
  }
}

template <class T>
nlohmann::json json_matrix(const Matrix<T>& m, int digits) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < m.rows(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int k = 0; k < m.cols(); ++k) row.push_back(json_number(m(i, k), digits));
    rows.push_back(std::move(row));
  }
  return rows;
}

// {"trigger", "output", "target", "attention": [layer][head], "linf_error"}.
template <class T>
nlohmann::json to_json(const Evaluation<T>& e, int digits) {
  nlohmann::json attn = nlohmann::json::array();
  for (const auto& layer : e.result.attention) {
    nlohmann::json heads = nlohmann::json::array();
    for (const auto& a : layer) heads.push_back(json_matrix(a, digits));
    attn.push_back(std::move(heads));
  }
  return {{"trigger", e.trigger},
          {"output", json_matrix(e.result.output, digits)},
          {"target", json_matrix(e.target, digits)},
          {"attention", std::move(attn)},
          {"linf_error",
           {{"value", json_number(e.error.value, digits)},
            {"position", e.error.position},
            {"coordinate", e.error.coordinate}}}};
}

}  // namespace sinkcert
