// SPDX-License-Identifier: MIT
//
// One model on one input, everything a user needs to compare with another
// implementation (PyTorch, numpy): outputs f(X), every attention matrix,
// the target y (plain or residual by model kind) and
//   e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}|   with its position and coordinate.
// Printing: a p-bit binary number round-trips through
//   digits(p) = 1 + ceil(p log10 2)
// significant decimal digits (17 for double), which format_decimal uses.
#pragma once

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
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

// Significant decimal digits that round-trip a p-bit binary float.
inline int decimal_digits_for_bits(int bits) {
  // digits(p) = 1 + ceil(p log10 2)
  return 1 + static_cast<int>(std::ceil(bits * std::log10(2.0)));
}

// x with `digits` significant digits ("%.*g" style).
template <class T>
std::string format_decimal(const T& x, int digits) {
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
template <class T>
nlohmann::json json_number(const T& x, int digits) {
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
