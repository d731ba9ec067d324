// SPDX-License-Identifier: MIT
#include "theorems/exact/relu_exact_checker.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <stdexcept>

#include "src/constructions.h"
#include "src/forward.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::exact {
namespace {

Rational q(long p, long den = 1) { return Rational(p) / Rational(den); }

// A random rational p/den with |p| <= 4 and den in 1..4.
Rational random_rational(std::mt19937_64& eng) {
  std::uniform_int_distribution<long> num(-4, 4), den(1, 4);
  const long p = num(eng);
  return q(p, den(eng));
}

// A random content matrix with entries p/8, p in -8..8 (inside [-1, 1]).
Matrix<Rational> random_content(const Task& task, std::mt19937_64& eng) {
  std::uniform_int_distribution<long> num(-8, 8);
  Matrix<Rational> C(task.L - 1, task.content_dim());
  for (int r = 0; r < C.rows(); ++r) {
    for (int c = 0; c < C.cols(); ++c) C(r, c) = q(num(eng), 8);
  }
  return C;
}

// f(X) - y at every entry, evaluated by the plain forward pass.
Matrix<Rational> error_matrix(const Model<Rational>& model, const Matrix<Rational>& X, int j) {
  return forward(model, X, false).output - make_target(X, j, target_kind_of(model.kind));
}

Rational linf(const Matrix<Rational>& E) {
  Rational m(0);
  for (int i = 0; i < E.rows(); ++i) {
    for (int d = 0; d < E.cols(); ++d) m = max_of(m, abs_of(E(i, d)));
  }
  return m;
}

// A single-layer model whose scores read the flags only: random rationals in
// the flag rows and columns {0, 1, n-1} of A, and a random M.
Model<Rational> random_flag_only_model(int n, std::uint64_t seed, int heads) {
  std::mt19937_64 eng(seed);
  Model<Rational> m;
  m.attention = AttentionKind::kRelu;
  m.n = n;
  m.layers.emplace_back();
  const int flags[3] = {kBosFlag, kTriggerFlag, ordinary_flag(n)};
  for (int h = 0; h < heads; ++h) {
    Head<Rational> head{Matrix<Rational>::Constant(n, n, Rational(0)), Matrix<Rational>(n, n)};
    for (int p : flags) {
      for (int c : flags) head.A(p, c) = random_rational(eng);
    }
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) head.M(r, c) = random_rational(eng);
    }
    m.layers.back().push_back(head);
  }
  return m;
}

// The certificate's per-trigger maxima and margin equal the largest |error|
// over every vertex of the content box, found by the forward pass alone (the
// error is affine in the content, so the vertices attain its maximum).
void check_margin_by_vertices(const Model<Rational>& model, const Task& task,
                              const ReluCertificate& cert) {
  std::map<int, Rational> best;
  testing::for_each_content_vertex(task, [&](int j, const Matrix<double>& C) {
    const Matrix<Rational> X = make_input<Rational>(task, j, testing::cast_matrix<Rational>(C));
    best[j] = max_of(best[j], linf(error_matrix(model, X, j)));
  });
  Rational overall(0);
  for (const auto& t : cert.per_trigger) {
    CHECK(t.max_abs_error == best.at(t.trigger));
    overall = max_of(overall, best.at(t.trigger));
  }
  CHECK(cert.margin == overall);
}

void check_witness(const Model<Rational>& model, const Task& task, const ReluCertificate& cert) {
  REQUIRE(cert.witness.has_value());
  const ReluWitness& w = *cert.witness;
  // The witness is a valid task input with its trigger at w.trigger.
  CHECK(validate_input(testing::cast_matrix<double>(w.X), task.n) == w.trigger);
  CHECK(w.recomputed == w.value);
  CHECK(w.value != 0);
  if (w.kind == ReluWitness::Kind::kError) {
    // Independently of the checker: the forward pass on X gives that error.
    const Matrix<Rational> E = error_matrix(model, w.X, w.trigger);
    CHECK(E(w.position, w.coordinate) == w.value);
    CHECK(abs_of(w.value) == cert.margin);
    CHECK(linf(E) == cert.margin);
  }
}

TEST_CASE("the ReLU construction is VERIFIED exactly under both conventions") {
  struct Case {
    int n, L;
    TriggerRange range;
  };
  const Case cases[] = {{5, 4, TriggerRange::kPaper},
                        {5, 4, TriggerRange::kReferenceCode},
                        {16, 16, TriggerRange::kPaper},
                        {16, 16, TriggerRange::kReferenceCode},
                        {3, 2, TriggerRange::kPaper}};
  for (const Case& c : cases) {
    const Task task{c.n, c.L, c.range};
    CAPTURE(c.n);
    CAPTURE(c.L);
    CAPTURE(to_string(c.range));
    const ReluCertificate cert = check_relu_exact(relu_construction<Rational>(c.n), task);
    CHECK(cert.verdict == Verdict::kVerified);
    CHECK(cert.evidence.label() == "EXACT");
    CHECK(cert.margin == 0);
    CHECK(!cert.witness.has_value());
    REQUIRE(cert.per_trigger.size() == task.trigger_positions().size());
    for (const ReluTriggerDetail& d : cert.per_trigger) {
      CHECK(d.verdict == Verdict::kVerified);
      CHECK(d.max_abs_error == 0);
      CHECK(d.bos_attention_zero);
    }
    CHECK(cert.per_trigger.front().trigger == task.trigger_positions().front());
  }
}

TEST_CASE("a one-layer residual model has the same error (x_i cancels in f - y)") {
  const Task task{4, 5, TriggerRange::kPaper};
  Model<Rational> model = relu_construction<Rational>(task.n);
  model.kind = ModelKind::kResidual;
  CHECK(check_relu_exact(model, task).verdict == Verdict::kVerified);
  model.layers[0][0].M(2, 2) = q(1, 2);
  const ReluCertificate cert = check_relu_exact(model, task);
  CHECK(cert.verdict == Verdict::kNotVerified);
  // Trigger row, content coordinate: (1/2 - 1) mean, at most 1/2 in size.
  CHECK(cert.margin == q(1, 2));
  check_witness(model, task, cert);
}

TEST_CASE("forward<Rational> at random rational content agrees with the VERIFIED verdict") {
  const Task task{6, 7, TriggerRange::kPaper};
  const Model<Rational> model = relu_construction<Rational>(task.n);
  REQUIRE(check_relu_exact(model, task).verdict == Verdict::kVerified);
  std::mt19937_64 eng(3);
  for (int j : task.trigger_positions()) {
    for (int trial = 0; trial < 3; ++trial) {
      const Matrix<Rational> X = make_input<Rational>(task, j, random_content(task, eng));
      const ForwardResult<Rational> fr = forward(model, X);
      CHECK(linf(fr.output - make_target(X, j, TargetKind::kPlain)) == 0);
      for (int i = 1; i < task.L; ++i) CHECK(fr.attention[0][0](i, 0) == 0);
    }
  }
}

TEST_CASE("no trigger position (L = 2, reference-code) is an error, not a vacuous VERIFIED") {
  const Task task{5, 2, TriggerRange::kReferenceCode};
  CHECK_THROWS_AS(check_relu_exact(relu_construction<Rational>(5), task), std::invalid_argument);
  CHECK_THROWS_AS(
      check_relu_exact(relu_construction<Rational>(6), Task{5, 4, TriggerRange::kPaper}),
      std::invalid_argument);
}

TEST_CASE("W_V scaled by 1001/1000 is NOT VERIFIED with an exact vertex witness") {
  const Task task{5, 4, TriggerRange::kPaper};
  Model<Rational> model = relu_construction<Rational>(task.n);
  model.layers[0][0].M = Matrix<Rational>::Identity(task.n, task.n) * q(1001, 1000);
  const ReluCertificate cert = check_relu_exact(model, task);
  CHECK(cert.verdict == Verdict::kNotVerified);
  // The trigger row outputs (1001/1000) mean, an error of mean/1000, whose
  // largest value over the box is 1/1000 (a content coordinate at +-1).
  CHECK(cert.margin == q(1, 1000));
  for (const ReluTriggerDetail& d : cert.per_trigger) {
    CHECK(d.verdict == Verdict::kNotVerified);
    CHECK(d.max_abs_error == q(1, 1000));
    CHECK(d.bos_attention_zero);
  }
  REQUIRE(cert.witness.has_value());
  CHECK(cert.witness->kind == ReluWitness::Kind::kError);
  check_witness(model, task, cert);
}

TEST_CASE("relu-count-all (divide by i + 1) is NOT VERIFIED") {
  for (TriggerRange range : {TriggerRange::kPaper, TriggerRange::kReferenceCode}) {
    const Task task{5, 6, range};
    Model<Rational> model = relu_construction<Rational>(task.n);
    model.attention = AttentionKind::kReluCountAll;
    const ReluCertificate cert = check_relu_exact(model, task);
    CHECK(cert.verdict == Verdict::kNotVerified);
    // Trigger row: sum_{k<=j} x_k / (j + 1), error -mean / (j + 1), largest
    // at the smallest trigger j0: 1 / (j0 + 1).
    const int j0 = task.trigger_positions().front();
    CHECK(cert.margin == q(1, j0 + 1));
    check_witness(model, task, cert);
  }
}

TEST_CASE("nonzero BOS attention with zero error is NOT VERIFIED with a BOS witness") {
  const Task task{5, 4, TriggerRange::kPaper};
  Model<Rational> model = relu_construction<Rational>(task.n);
  // The trigger query also scores BOS; BOS's value is erased (M e_0 = 0).
  model.layers[0][0].A(kTriggerFlag, kBosFlag) = Rational(1);
  model.layers[0][0].M(kBosFlag, kBosFlag) = Rational(0);
  const ReluCertificate cert = check_relu_exact(model, task);
  CHECK(cert.verdict == Verdict::kNotVerified);
  CHECK(cert.margin == 0);
  REQUIRE(cert.witness.has_value());
  CHECK(cert.witness->kind == ReluWitness::Kind::kBosAttention);
  CHECK(cert.witness->trigger == 1);
  CHECK(cert.witness->position == 1);
  CHECK(cert.witness->value == 1);
  check_witness(model, task, cert);
}

TEST_CASE("content-dependent scores, softmax and two layers are NOT APPLICABLE") {
  const Task task{5, 4, TriggerRange::kPaper};
  Model<Rational> content = relu_construction<Rational>(task.n);
  content.layers[0][0].A(kFirstContent, kTriggerFlag) = q(1, 2);
  ReluCertificate cert = check_relu_exact(content, task);
  CHECK(cert.verdict == Verdict::kNotApplicable);
  CHECK(cert.reason.find("depend on the content") != std::string::npos);
  CHECK(cert.per_trigger.empty());

  Model<Rational> key_content = relu_construction<Rational>(task.n);
  key_content.layers[0][0].A(kTriggerFlag, kFirstContent + 1) = q(-3);
  CHECK(check_relu_exact(key_content, task).verdict == Verdict::kNotApplicable);

  // A BOS query only ever sees BOS, whose content is 0: A[0, c] is harmless.
  Model<Rational> bos_row = relu_construction<Rational>(task.n);
  bos_row.layers[0][0].A(kBosFlag, kFirstContent) = q(7);
  CHECK(check_relu_exact(bos_row, task).verdict == Verdict::kVerified);

  Model<Rational> softmax = relu_construction<Rational>(task.n);
  softmax.attention = AttentionKind::kSoftmax;
  CHECK(check_relu_exact(softmax, task).verdict == Verdict::kNotApplicable);

  Model<Rational> two_layers = relu_construction<Rational>(task.n);
  two_layers.kind = ModelKind::kResidual;
  two_layers.layers.push_back(two_layers.layers[0]);
  cert = check_relu_exact(two_layers, task);
  CHECK(cert.verdict == Verdict::kNotApplicable);
  // NOT APPLICABLE and why; no margin and no evidence level
  CHECK(summary_text(cert).find("verdict: NOT APPLICABLE: ") != std::string::npos);
  CHECK(summary_text(cert).find("EXACT") == std::string::npos);
  CHECK(to_json(cert, RunInfo{})["evidence"].is_null());
}

TEST_CASE("two heads whose value maps sum to the identity are VERIFIED") {
  const Task task{6, 6, TriggerRange::kPaper};
  Model<Rational> model = relu_construction<Rational>(task.n);
  std::mt19937_64 eng(5);
  Matrix<Rational> N(task.n, task.n);
  for (int r = 0; r < task.n; ++r) {
    for (int c = 0; c < task.n; ++c) N(r, c) = random_rational(eng);
  }
  const Matrix<Rational> I = Matrix<Rational>::Identity(task.n, task.n);
  Head<Rational> second = model.layers[0][0];
  model.layers[0][0].M = I * q(1, 3) + N;
  second.M = I * q(2, 3) - N;
  model.layers[0].push_back(second);
  CHECK(check_relu_exact(model, task).verdict == Verdict::kVerified);
  // Break the balance in one content entry: NOT VERIFIED.
  model.layers[0][1].M(3, 2) += q(1, 7);
  const ReluCertificate cert = check_relu_exact(model, task);
  CHECK(cert.verdict == Verdict::kNotVerified);
  check_witness(model, task, cert);
}

TEST_CASE("the exact margin equals the brute-force maximum over all vertices") {
  // n = 5, L = 4: 3 positions x 2 content coordinates = 64 vertices per
  // trigger. The error is affine in the content, so its maximum over the box
  // is the maximum over the vertices, computed here by the forward pass alone.
  const Task task{5, 4, TriggerRange::kPaper};
  for (std::uint64_t seed : {1u, 2u}) {
    const Model<Rational> model = random_flag_only_model(task.n, seed, seed == 1 ? 1 : 2);
    const ReluCertificate cert = check_relu_exact(model, task);
    REQUIRE(cert.verdict == Verdict::kNotVerified);
    check_margin_by_vertices(model, task, cert);
    check_witness(model, task, cert);
    // Random interior points never exceed the margin.
    std::mt19937_64 eng(seed);
    for (int j : task.trigger_positions()) {
      const Matrix<Rational> X = make_input<Rational>(task, j, random_content(task, eng));
      CHECK(linf(error_matrix(model, X, j)) <= cert.margin);
    }
  }
}

// --- Several layers -----------------------------------------------------------

// A random residual ReLU model satisfying the several-layer conditions: A with
// random rationals in the flag rows and columns (plus A[0][c], which only the
// BOS query reads), M random except that layers before the last have zero
// flag rows.
Model<Rational> random_deep_model(int n, int layers, int heads, std::uint64_t seed) {
  std::mt19937_64 eng(seed);
  Model<Rational> m;
  m.kind = ModelKind::kResidual;
  m.attention = AttentionKind::kRelu;
  m.n = n;
  const int flags[3] = {kBosFlag, kTriggerFlag, ordinary_flag(n)};
  for (int l = 0; l < layers; ++l) {
    m.layers.emplace_back();
    for (int h = 0; h < heads; ++h) {
      Head<Rational> head{Matrix<Rational>::Constant(n, n, Rational(0)), Matrix<Rational>(n, n)};
      for (int p : flags) {
        for (int c : flags) head.A(p, c) = random_rational(eng);
      }
      head.A(kBosFlag, kFirstContent) = random_rational(eng);
      for (int r = 0; r < n; ++r) {
        const bool flag = r == kBosFlag || r == kTriggerFlag || r == ordinary_flag(n);
        for (int c = 0; c < n; ++c) {
          head.M(r, c) = flag && l + 1 < layers ? Rational(0) : random_rational(eng);
        }
      }
      m.layers.back().push_back(head);
    }
  }
  return m;
}

TEST_CASE("the 2 x 2 and 4 x 4 residual constructions are VERIFIED exactly") {
  struct Case {
    int n, L, layers, heads;
    TriggerRange range;
  };
  const Case cases[] = {
      {5, 6, 2, 2, TriggerRange::kPaper},   {5, 6, 4, 4, TriggerRange::kReferenceCode},
      {16, 16, 2, 2, TriggerRange::kPaper}, {16, 16, 4, 4, TriggerRange::kPaper},
      {6, 5, 2, 1, TriggerRange::kPaper},   {6, 5, 4, 3, TriggerRange::kPaper},
      {6, 5, 1, 2, TriggerRange::kPaper}};
  for (const Case& c : cases) {
    const Task task{c.n, c.L, c.range};
    CAPTURE(c.n);
    CAPTURE(c.L);
    CAPTURE(c.layers);
    CAPTURE(c.heads);
    const Model<Rational> model = relu_residual_construction<Rational>(c.n, c.layers, c.heads);
    REQUIRE(model.num_layers() == c.layers);
    REQUIRE(model.num_heads() == c.heads);
    const ReluCertificate cert = check_relu_exact(model, task);
    CHECK(cert.verdict == Verdict::kVerified);
    CHECK(cert.evidence.label() == "EXACT");
    CHECK(cert.margin == 0);
    CHECK(cert.per_trigger.size() == task.trigger_positions().size());
  }
}

TEST_CASE("every head of the residual constructions is used and none attends to BOS") {
  const Task task{5, 6, TriggerRange::kPaper};
  std::mt19937_64 eng(11);
  for (int layers : {2, 4}) {
    const Model<Rational> model = relu_residual_construction<Rational>(task.n, layers, layers);
    // The forward pass alone: zero error and zero BOS attention at random
    // content, and every head gives the trigger rows some attention (heads
    // that read the ordinary keys only have none to read at j = 1).
    Matrix<Rational> mass = Matrix<Rational>::Constant(layers, layers, Rational(0));
    for (int j : task.trigger_positions()) {
      const Matrix<Rational> X = make_input<Rational>(task, j, random_content(task, eng));
      const ForwardResult<Rational> fr = forward(model, X);
      CHECK(linf(fr.output - make_target(X, j, TargetKind::kResidual)) == 0);
      for (int l = 0; l < layers; ++l) {
        for (int h = 0; h < layers; ++h) {
          for (int k = 1; k <= j; ++k) mass(l, h) += fr.attention[l][h](j, k);
          for (int i = 1; i < task.L; ++i) CHECK(fr.attention[l][h](i, 0) == 0);
        }
      }
    }
    for (int l = 0; l < layers; ++l) {
      for (int h = 0; h < layers; ++h) CHECK(mass(l, h) > 0);
    }
    // Zeroing any one head's M breaks the model: each head is necessary.
    for (int l = 0; l < layers; ++l) {
      for (int h = 0; h < layers; ++h) {
        Model<Rational> ablated = model;
        ablated.layers[l][h].M.setConstant(Rational(0));
        CAPTURE(l);
        CAPTURE(h);
        const ReluCertificate cert = check_relu_exact(ablated, task);
        CHECK(cert.verdict == Verdict::kNotVerified);
        check_witness(ablated, task, cert);
      }
    }
  }
}

TEST_CASE("several layers breaking the conditions are NOT APPLICABLE, naming layer, head, entry") {
  const Task task{6, 5, TriggerRange::kPaper};
  Model<Rational> writes_flag = relu_residual_construction<Rational>(task.n, 2, 2);
  writes_flag.layers[0][1].M(kTriggerFlag, kFirstContent) = q(1, 3);
  ReluCertificate cert = check_relu_exact(writes_flag, task);
  CHECK(cert.verdict == Verdict::kNotApplicable);
  CHECK(cert.per_trigger.empty());
  CHECK(cert.reason.find("layer 0, head 1: M[1][2] = 1/3 != 0 writes into the trigger flag "
                         "coordinate 1, which layer 1's scores read") != std::string::npos);
  // The last layer may write the flags (the construction's does).
  Model<Rational> last_writes = relu_residual_construction<Rational>(task.n, 2, 2);
  last_writes.layers[1][1].M(ordinary_flag(task.n), kFirstContent) = q(1, 3);
  CHECK(check_relu_exact(last_writes, task).verdict == Verdict::kNotVerified);

  Model<Rational> reads_content = relu_residual_construction<Rational>(task.n, 4, 4);
  reads_content.layers[3][2].A(kTriggerFlag, kFirstContent + 1) = q(-2);
  cert = check_relu_exact(reads_content, task);
  CHECK(cert.verdict == Verdict::kNotApplicable);
  CHECK(cert.reason.find("layer 3, head 2: A[1][3] = -2/1 != 0 puts the key's content") !=
        std::string::npos);
  Model<Rational> query_content = relu_residual_construction<Rational>(task.n, 2, 2);
  query_content.layers[1][0].A(kFirstContent, kBosFlag) = q(1, 5);
  cert = check_relu_exact(query_content, task);
  CHECK(cert.verdict == Verdict::kNotApplicable);
  CHECK(cert.reason.find("layer 1, head 0: A[2][0]") != std::string::npos);

  Model<Rational> not_residual = relu_residual_construction<Rational>(task.n, 2, 2);
  not_residual.kind = ModelKind::kSingleLayer;
  CHECK(check_relu_exact(not_residual, task).verdict == Verdict::kNotApplicable);
  Model<Rational> softmax = relu_residual_construction<Rational>(task.n, 2, 2);
  softmax.attention = AttentionKind::kSoftmax;
  CHECK(check_relu_exact(softmax, task).verdict == Verdict::kNotApplicable);
}

TEST_CASE("a perturbed 2 x 2 construction is NOT VERIFIED with an exact vertex witness") {
  const Task task{5, 6, TriggerRange::kPaper};
  Model<Rational> model = relu_residual_construction<Rational>(task.n, 2, 2);
  // Layer 0, head 1 adds 1/1000 more of the earlier tokens' content mean.
  model.layers[0][1].M *= q(1001, 1000);
  const ReluCertificate cert = check_relu_exact(model, task);
  CHECK(cert.verdict == Verdict::kNotVerified);
  // Head (0, 1) carries half of sum_{k<j} x_k / j; the excess is
  // (1/2000) sum_{k<j} c_k / j, largest at j = L-1: (1/2000) (L-2)/(L-1).
  CHECK(cert.margin == q(1, 2000) * q(task.L - 2, task.L - 1));
  check_witness(model, task, cert);
}

TEST_CASE("a BOS query reading content is harmless in every layer; BOS attention has a witness") {
  const Task task{5, 4, TriggerRange::kPaper};
  Model<Rational> bos_row = relu_residual_construction<Rational>(task.n, 2, 2);
  bos_row.layers[1][0].A(kBosFlag, kFirstContent) = q(7);
  bos_row.layers[0][0].M(kFirstContent, kBosFlag) = q(1, 2);  // x_0's content becomes nonzero
  bos_row.layers[0][0].A(kBosFlag, kBosFlag) = q(1);          // ... through a_00 = 1
  const ReluCertificate ok = check_relu_exact(bos_row, task);
  // BOS's own row changes (its target is x_0), so the error is that change.
  CHECK(ok.verdict == Verdict::kNotVerified);
  CHECK(ok.margin == q(1, 2));
  check_witness(bos_row, task, ok);

  Model<Rational> bos = relu_residual_construction<Rational>(task.n, 2, 2);
  // The last layer's head 1 (ordinary flag, M = E_{n-1}) also scores BOS,
  // whose value M e_0 = 0: zero error, but a^{1,1}_j0 = 1/j.
  bos.layers[1][1].A(kTriggerFlag, kBosFlag) = q(1);
  const ReluCertificate cert = check_relu_exact(bos, task);
  CHECK(cert.verdict == Verdict::kNotVerified);
  CHECK(cert.margin == 0);
  REQUIRE(cert.witness.has_value());
  CHECK(cert.witness->kind == ReluWitness::Kind::kBosAttention);
  CHECK(cert.witness->layer == 1);
  CHECK(cert.witness->head == 1);
  CHECK(cert.witness->trigger == 1);
  CHECK(cert.witness->value == 1);
  CHECK(cert.reason.find("layer 1, head 1") != std::string::npos);
  check_witness(bos, task, cert);
}

TEST_CASE("several layers: the exact margin equals the brute-force maximum over all vertices") {
  // n = 5, L = 4: 64 vertices per trigger, each evaluated by forward<Rational>.
  const Task task{5, 4, TriggerRange::kPaper};
  for (std::uint64_t seed : {3u, 4u, 5u}) {
    const int layers = seed == 5 ? 3 : 2, heads = seed == 3 ? 1 : 2;
    const Model<Rational> model = random_deep_model(task.n, layers, heads, seed);
    const ReluCertificate cert = check_relu_exact(model, task);
    CAPTURE(seed);
    REQUIRE(cert.verdict == Verdict::kNotVerified);
    check_margin_by_vertices(model, task, cert);
    check_witness(model, task, cert);
  }
}

TEST_CASE("JSON certificate and summary text") {
  CHECK(rational_string(q(1, 3)) == "1/3");
  CHECK(rational_string(q(0)) == "0/1");
  CHECK(rational_string(q(-6, 4)) == "-3/2");
  const Task task{5, 4, TriggerRange::kReferenceCode};
  RunInfo info;
  info.command_line = "sinkcert verify relu --n 5 --L 4";
  info.precision = "exact";
  const ReluCertificate ok = check_relu_exact(relu_construction<Rational>(5), task);
  const nlohmann::json j = to_json(ok, info);
  CHECK(j["verdict"] == "VERIFIED");
  CHECK(j["evidence"] == "EXACT");
  CHECK(j["margin"]["exact"] == "0/1");
  CHECK(j["task"]["trigger_range"] == "reference-code");
  CHECK(j["per_trigger"].size() == 2);
  CHECK(j["witness"].is_null());
  CHECK(j["provenance"]["command_line"] == info.command_line);
  const std::string text = summary_text(ok);
  CHECK(text.find("j = 2: VERIFIED") != std::string::npos);
  CHECK(text.substr(text.rfind("verdict:")) ==
        "verdict: VERIFIED  margin (max |error| over box and triggers) = 0  precision: "
        "exact  evidence: EXACT\n");

  Model<Rational> bad = relu_construction<Rational>(5);
  bad.attention = AttentionKind::kReluCountAll;
  const nlohmann::json jb = to_json(check_relu_exact(bad, task), info);
  CHECK(jb["verdict"] == "NOT VERIFIED");
  CHECK(jb["margin"]["exact"] == "1/3");
  // a margin that is not an integer prints as p/q beside its double
  CHECK(summary_text(check_relu_exact(bad, task)).find("= 1/3 ~ 0.333") != std::string::npos);
  CHECK(jb["witness"]["kind"] == "error");
  CHECK(jb["witness"]["X"].size() == 4);
  CHECK(jb["witness"]["value"]["exact"] == jb["witness"]["recomputed_by_forward"]["exact"]);
}

}  // namespace
}  // namespace sinkcert::theorems::exact
