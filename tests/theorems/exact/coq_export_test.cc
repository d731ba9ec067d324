// SPDX-License-Identifier: MIT
//
// The Coq certificate writer, without coqc: which theorem each verdict gets,
// the exact weights and witness in the text, the refused models and file
// names. That coqc accepts the certificates (and rejects a perturbed model's
// or an edited one) is tests/app/coq_cli_test.sh.
#include "theorems/exact/coq_export.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "src/constructions.h"
#include "tests/input_error_check.h"

namespace sinkcert::theorems::exact {
namespace {

Rational q(long p, long den = 1) { return Rational(p) / Rational(den); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Task task_of(int n, int L, TriggerRange range = TriggerRange::kPaper) {
  Task t;
  t.n = n;
  t.L = L;
  t.range = range;
  return t;
}

RunInfo info() {
  RunInfo r;
  r.command_line = "sinkcert verify relu --coq test.v";
  r.revision = "abc";
  r.time_utc = "2026-12-01T00:00:00Z";
  r.precision = "exact";
  return r;
}

CoqCertificate export_model(const Model<Rational>& model, const Task& task, bool force = false) {
  return coq_certificate(model, check_relu_exact(model, task), info(), force);
}

TEST_CASE("coq_rational writes p # q in lowest terms, 0 as 0") {
  CHECK(coq_rational(q(0)) == "0");
  CHECK(coq_rational(q(3)) == "(3 # 1)");
  CHECK(coq_rational(q(-6, 8)) == "(-3 # 4)");
}

TEST_CASE("a VERIFIED model gets theorem3 over its exact weights and trigger range") {
  const Model<Rational> model = relu_construction<Rational>(5);
  const CoqCertificate paper = export_model(model, task_of(5, 4));
  CHECK(paper.theorem == "theorem3");
  CHECK(contains(paper.text, "Theorem theorem3 : forall j : nat, (1 <= j < 4)%nat ->"));
  CHECK(contains(paper.text, "check 5 4 1 Aq Mq false 1 = true"));
  CHECK(contains(paper.text, "output 5 1 Aq Mq false false j c i d"));
  CHECK(contains(paper.text, "Print Assumptions theorem3."));
  CHECK(contains(paper.text, "command: sinkcert verify relu --coq test.v"));
  // A = e_1 (e_1 + e_4)^T: row 1 of A^0
  CHECK(contains(paper.text, "[0; (1 # 1); 0; 0; (1 # 1)]"));
  CHECK_FALSE(contains(paper.text, "DEBUG EXPORT"));

  const CoqCertificate reference = export_model(model, task_of(5, 4, TriggerRange::kReferenceCode));
  CHECK(contains(reference.text, "(2 <= j < 4)%nat"));
  CHECK(contains(reference.text, "check 5 4 1 Aq Mq false 2 = true"));
}

TEST_CASE("relu-count-all and a one-layer residual model set the statement's switches") {
  Model<Rational> residual = relu_construction<Rational>(6);
  residual.kind = ModelKind::kResidual;
  const CoqCertificate r = export_model(residual, task_of(6, 5));
  CHECK(r.theorem == "theorem3");
  CHECK(contains(r.text, "output 6 1 Aq Mq false true j c i d"));
  CHECK(contains(r.text, "target 6 true j c i d"));

  Model<Rational> count_all = relu_construction<Rational>(6);
  count_all.attention = AttentionKind::kReluCountAll;
  const CoqCertificate c = export_model(count_all, task_of(6, 5));
  CHECK(c.theorem == "witness");  // NOT VERIFIED, margin 1/(j_min + 1)
  CHECK(contains(c.text, "output 6 1 Aq Mq true false j c i d"));
}

TEST_CASE("a NOT VERIFIED model gets its witness, or theorem3 when forced") {
  Model<Rational> model = relu_construction<Rational>(6);
  model.layers[0][0].M *= q(5, 4);
  model.layers[0][0].M(2, 3) = q(-7, 3);
  const Task task = task_of(6, 5);
  const ReluCertificate cert = check_relu_exact(model, task);
  REQUIRE(cert.verdict == Verdict::kNotVerified);
  REQUIRE(cert.witness);
  const CoqCertificate w = coq_certificate(model, cert, info(), false);
  CHECK(w.theorem == "witness");
  CHECK(contains(w.text, "(-7 # 3)"));  // the exact entry M[2][3]
  const ReluWitness& wit = *cert.witness;
  const std::string value = "IZR (" + bmp::numerator(wit.value).str() + ") / IZR (" +
                            bmp::denominator(wit.value).str() + ")";
  CHECK(contains(w.text, "f " + std::to_string(wit.trigger) + " c_witness " +
                             std::to_string(wit.position) + " " + std::to_string(wit.coordinate) +
                             " - y "));
  CHECK(contains(w.text, " = " + value + " /\\"));
  CHECK(contains(w.text, "Print Assumptions witness."));
  CHECK_FALSE(contains(w.text, "Theorem theorem3"));

  const CoqCertificate forced = coq_certificate(model, cert, info(), true);
  CHECK(forced.theorem == "theorem3");
  CHECK(contains(forced.text, "DEBUG EXPORT"));
}

TEST_CASE("zero error but BOS attention: the witness is the attention value") {
  Model<Rational> model = relu_construction<Rational>(6);
  model.layers[0][0].A(kTriggerFlag, kBosFlag) = q(1);  // the trigger row scores BOS at 1
  model.layers[0][0].M(kBosFlag, kBosFlag) = q(0);      // and BOS's value is 0
  const ReluCertificate cert = check_relu_exact(model, task_of(6, 5));
  REQUIRE(cert.witness);
  REQUIRE(cert.witness->kind == ReluWitness::Kind::kBosAttention);
  const CoqCertificate w = coq_certificate(model, cert, info(), false);
  CHECK(contains(w.text, "a 0 1 c_witness 1 0 = IZR (1) / IZR (1) /\\"));
}

TEST_CASE(
    "a weight file's factored heads are written with the theorem that A, M are their products") {
  const int n = 5;
  HeadWeights head;
  head.factored = true;
  head.W_Q = Matrix<Rational>::Constant(1, n, q(0));
  head.W_Q(0, kTriggerFlag) = q(1);
  head.W_K = head.W_Q;
  head.W_K(0, ordinary_flag(n)) = q(1);
  head.W_V = Matrix<Rational>::Identity(n, n) * q(1001, 1000);
  head.W_O = Matrix<Rational>::Identity(n, n);
  WeightFile file;
  file.attention = AttentionKind::kRelu;
  file.n = n;
  file.layers = {{head}};
  const Model<Rational> model = to_model<Rational>(file);
  const ReluCertificate cert = check_relu_exact(model, task_of(n, 4));
  const CoqCertificate w = coq_certificate(model, cert, info(), false, &file);
  CHECK(contains(w.text, "Definition factored : list bool := [true]."));
  CHECK(contains(w.text, "[[0; (1 # 1); 0; 0; (1 # 1)]]"));  // W_K = (e_1 + e_4)^T
  CHECK(contains(w.text, "Theorem weights_are_the_files_products"));
  CHECK_FALSE(contains(coq_certificate(model, cert, info(), false).text, "WQ_data"));

  HeadWeights products;
  products.factored = false;
  products.A = model.layers[0][0].A;
  products.M = model.layers[0][0].M;
  file.layers = {{products}};
  CHECK_FALSE(contains(coq_certificate(model, cert, info(), false, &file).text, "WQ_data"));
  file.layers = {{products, products}};
  CHECK_THROWS_AS(coq_certificate(model, cert, info(), false, &file), std::invalid_argument);
}

TEST_CASE("models the statement cannot express are refused") {
  Model<Rational> content = relu_construction<Rational>(6);
  content.layers[0][0].A(3, 2) = q(1, 2);  // NOT APPLICABLE: a score reads the content
  CHECK_THROWS_AS(export_model(content, task_of(6, 5)), std::invalid_argument);
  CHECK(export_model(content, task_of(6, 5), true).theorem == "theorem3");

  Model<Rational> softmax = relu_construction<Rational>(6);
  softmax.attention = AttentionKind::kSoftmax;
  CHECK(!coq_unsupported_reason(softmax).empty());
  CHECK_THROWS_AS(export_model(softmax, task_of(6, 5), true), std::invalid_argument);

  Model<Rational> two = relu_construction<Rational>(6);
  two.kind = ModelKind::kResidual;
  two.layers.push_back(two.layers[0]);
  CHECK(contains(coq_unsupported_reason(two), "2 layers"));
  CHECK(coq_unsupported_reason(relu_construction<Rational>(6)).empty());
}

TEST_CASE("check_coq_file_name takes NAME.v with NAME a Coq module name") {
  for (const char* ok : {"t3.v", "/tmp/some-dir/My_cert2.v", "a.v"}) {
    CHECK_NOTHROW(check_coq_file_name(ok, "--coq"));
  }
  for (const char* bad : {"t-3.v", "3t.v", "t3.txt", ".v", "dir/", "t3.v.bak", "_t.v"}) {
    testing::CaughtError error;
    try {
      check_coq_file_name(bad, "--coq");
    } catch (const InputError& e) {
      error = testing::caught(e);
    }
    INFO("file name: " << bad);
    testing::check_error(error, bad, "a letter followed by letters, digits or '_'");
    CHECK(error.file == "--coq");
  }
}

}  // namespace
}  // namespace sinkcert::theorems::exact
