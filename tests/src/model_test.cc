// SPDX-License-Identifier: MIT
//
// src/model.h: the names of attention and model kinds (parse and to_string
// are inverse, bad names are refused with the list of accepted ones),
// Model::cast<U> (entry by entry, exact from Rational into Rational and
// enclosing into Mpfi) and single_head_model.
#include "src/model.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "src/interval.h"

namespace sinkcert {
namespace {

constexpr AttentionKind kAllAttention[] = {
    AttentionKind::kSoftmax,      AttentionKind::kRelu,
    AttentionKind::kReluCountAll, AttentionKind::kSoftmaxOffByOne,
    AttentionKind::kSigmoid,      AttentionKind::kSoftpick,
    AttentionKind::kGated};

TEST_CASE("attention kinds: names round trip and are distinct") {
  std::string listed;
  for (const AttentionKind k : kAllAttention) {
    const std::string name = to_string(k);
    CAPTURE(name);
    CHECK(parse_attention_kind(name) == k);
    CHECK(attention_kind_names().find(name) != std::string::npos);
    for (const AttentionKind other : kAllAttention) {
      if (other != k) CHECK(to_string(other) != name);
    }
    listed += (listed.empty() ? "" : ", ") + name;
  }
  // the list in messages is every name, in declaration order
  CHECK(attention_kind_names() == listed);
  CHECK(attention_kind_names() ==
        "softmax, relu, relu-count-all, softmax-off-by-one, sigmoid, softpick, gated");
}

TEST_CASE("model kinds: names round trip") {
  for (const ModelKind k : {ModelKind::kSingleLayer, ModelKind::kResidual}) {
    CHECK(parse_model_kind(to_string(k)) == k);
  }
  CHECK(to_string(ModelKind::kSingleLayer) == "single-layer");
  CHECK(to_string(ModelKind::kResidual) == "residual");
  CHECK(target_kind_of(ModelKind::kResidual) == TargetKind::kResidual);
  CHECK(target_kind_of(ModelKind::kSingleLayer) == TargetKind::kPlain);
}

// A bad name is refused, and the message quotes it and lists every accepted
// name (names are case-sensitive and whole).
TEST_CASE("bad kind names are refused with the accepted names listed") {
  for (const std::string bad : {"Softmax", "soft", "relu ", "", "sigmoid-off-by-one"}) {
    CAPTURE(bad);
    try {
      parse_attention_kind(bad);
      FAIL("accepted a bad attention kind");
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      CHECK(message.find("'" + bad + "'") != std::string::npos);
      CHECK(message.find(attention_kind_names()) != std::string::npos);
    }
  }
  for (const std::string bad : {"single_layer", "Residual", "multi-layer", ""}) {
    CAPTURE(bad);
    try {
      parse_model_kind(bad);
      FAIL("accepted a bad model kind");
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      CHECK(message.find("'" + bad + "'") != std::string::npos);
      CHECK(message.find("single-layer") != std::string::npos);
      CHECK(message.find("residual") != std::string::npos);
    }
  }
}

Model<Rational> two_layer_rational_model() {
  // two layers of two heads, entries (l + 1) / (3 (h + 1)) + i - k / 7:
  // thirds and sevenths, which no binary type holds exactly
  Model<Rational> m;
  m.kind = ModelKind::kResidual;
  m.attention = AttentionKind::kSigmoid;
  m.n = 3;
  for (int l = 0; l < 2; ++l) {
    m.layers.emplace_back();
    for (int h = 0; h < 2; ++h) {
      Head<Rational> head{Matrix<Rational>(3, 3), Matrix<Rational>(3, 3)};
      for (int i = 0; i < 3; ++i) {
        for (int k = 0; k < 3; ++k) {
          head.A(i, k) = Rational(l + 1, 3 * (h + 1)) + i - Rational(k, 7);
          head.M(i, k) = -head.A(i, k) / 5;
        }
      }
      m.layers.back().push_back(head);
    }
  }
  return m;
}

TEST_CASE("cast keeps kind, attention, shape, and converts every entry") {
  const Model<Rational> exact = two_layer_rational_model();
  const Model<Rational> same = exact.cast<Rational>();
  const Model<double> rounded = exact.cast<double>();
  Model<Mpfi> enclosed;
  {
    PrecisionScope scope(128);
    enclosed = exact.cast<Mpfi>();
  }
  CHECK(rounded.kind == ModelKind::kResidual);
  CHECK(rounded.attention == AttentionKind::kSigmoid);
  CHECK(rounded.n == 3);
  CHECK(enclosed.num_layers() == 2);
  CHECK(enclosed.num_heads() == 2);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      const Head<Rational>& e = exact.layers[l][h];
      for (int i = 0; i < 3; ++i) {
        for (int k = 0; k < 3; ++k) {
          CAPTURE(l);
          CAPTURE(h);
          CAPTURE(i);
          CAPTURE(k);
          // Rational -> Rational exact
          CHECK(same.layers[l][h].A(i, k) == e.A(i, k));
          CHECK(same.layers[l][h].M(i, k) == e.M(i, k));
          // Rational -> double: the nearest double (scalar_cast rounds once)
          CHECK(rounded.layers[l][h].A(i, k) == scalar_cast<double>(e.A(i, k)));
          CHECK(rounded.layers[l][h].M(i, k) == scalar_cast<double>(e.M(i, k)));
          // Rational -> Mpfi: an enclosure of the exact value, and a narrow
          // one (128 bits: width <= 2^-120 relative to a value of size <= 3)
          const Mpfi& a = enclosed.layers[l][h].A(i, k);
          CHECK(scalar_cast<Rational>(lower_of(a)) <= e.A(i, k));
          CHECK(scalar_cast<Rational>(upper_of(a)) >= e.A(i, k));
          CHECK(width_of(a) <= bmp::ldexp(Mpfr(1), -120));
        }
      }
    }
  }
  // the double model is a rounding, not the exact model: thirds differ
  CHECK(Rational(rounded.layers[0][0].A(0, 0)) != exact.layers[0][0].A(0, 0));
}

TEST_CASE("single_head_model builds one layer of one head") {
  Matrix<double> A(2, 2), M(2, 2);
  A << 1, 2, 3, 4;
  M << -1, 0, 0.5, 2;
  const Model<double> m = single_head_model(AttentionKind::kRelu, A, M);
  CHECK(m.kind == ModelKind::kSingleLayer);
  CHECK(m.attention == AttentionKind::kRelu);
  CHECK(m.n == 2);
  CHECK(m.num_layers() == 1);
  CHECK(m.num_heads() == 1);
  CHECK(m.layers[0][0].A == A);
  CHECK(m.layers[0][0].M == M);
  const Model<double> empty;
  CHECK(empty.num_layers() == 0);
  CHECK(empty.num_heads() == 0);
}

}  // namespace
}  // namespace sinkcert
