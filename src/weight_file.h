// SPDX-License-Identifier: MIT
//
// The JSON weight file ("sinkcert-weights", version 1; docs/commands.md, "File formats").
//
// Every matrix is stored as used in y = W x (rows = outputs), which is how
// PyTorch's nn.Linear stores its weight (it computes x @ W.T), so weights
// exported from PyTorch load unchanged. A head is given either factored,
//   W_Q, W_K: d_k x n,  W_V: d_v x n,  W_O: n x d_v   (d_k = d_v = n in the paper)
// or by the two products that alone define the function (model.h),
//   A = W_Q^T W_K  (n x n, s_ik = x_i^T A x_k),   M = W_O W_V  (n x n).
// A head of a "gated" model also has "gate": W_g, n x n (g_i = sigma(W_g x_i)
// multiplies the head output coordinatewise, model.h); every other kind
// rejects the key, and a gated head without it is an error.
// Every entry is the exact rational its decimal literal denotes (a JSON number
// or a decimal string; json_reader.h), so a file describes one exact model.
// to_model<T> makes it in T: entries exactly for Rational, enclosed for Mpfi,
// rounded to nearest for double/Mpfr; factored heads are multiplied out in T
// (exactly for Rational, as an enclosure for Mpfi, rounded once per operation
// in double/Mpfr, which is then NUMERIC(p)). sinkcert writes every entry as
// its exact decimal expansion, so a file it writes from a double or MPFR
// model denotes exactly that model.
// Reading validates everything and throws InputError(file, field, expected)
// with the field as a path, e.g. weights[0][1].W_K[3][2].
//
// The task the model was made for (optional, every member optional):
//   "task": {"L": 16, "trigger_range": "paper" | "reference-code",
//            "score_scale": 1.0, "source": "free text"}
// A command that needs L or the trigger convention takes them from here when
// the command line does not give them; given on both, they must agree
// (app/task_options.cc, resolve_task).
// score_scale s (an exact decimal > 0, default 1) says the file's scores are
// to be multiplied by s: the model the file denotes has
//   A = s * W_Q^T W_K   (factored)   or   A = s * A_file   (products),
// i.e. a model trained with scores (W_Q x_i) . (W_K x_k) / sqrt(d) is stored
// with its own W_Q, W_K and "score_scale": 1/sqrt(d) (written as a decimal,
// which is then the exact scale). to_model applies s, and it is the only
// place that does: the stored matrices are the file's, every reader of the
// model (double, MPFR, MPFI, exact) gets the one scaled model, and writing
// the file back keeps matrices and scale apart, so reading it again gives
// the same model (never the scale applied twice). "metadata" is never read;
// scripts/convert_pytorch.py folds its --score-scale into W_Q and records it
// there, so its files have no "task" scale to apply again.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/json_reader.h"
#include "src/model.h"
#include "src/scalar_traits.h"

namespace sinkcert {

// The format tag and version this code reads and writes.
inline constexpr const char* kWeightFormat = "sinkcert-weights";
inline constexpr int kWeightFormatVersion = 1;

struct HeadWeights {                          // as stored in a file, y = W x (rows = outputs)
  bool factored = true;                       // true: W_Q, W_K, W_V, W_O given; false: A, M given
  Matrix<Rational> W_Q, W_K, W_V, W_O, A, M;  // the exact values
  Matrix<Rational> gate;                      // W_g, n x n (gated attention only, else empty)
};

// The file's "task" object (see above); an absent member is empty.
struct WeightTask {
  std::optional<int> L;
  std::optional<TriggerRange> range;
  Rational score_scale = 1;  // exact, > 0: A = score_scale * (the file's A)
  std::string source;        // free text, "" when absent
};

struct WeightFile {
  ModelKind kind = ModelKind::kSingleLayer;
  AttentionKind attention = AttentionKind::kSoftmax;
  int n = 0;
  std::vector<std::vector<HeadWeights>> layers;  // [layer][head]
  nlohmann::json metadata;                       // free-form provenance, may be null
  std::optional<WeightTask> task;                // the "task" object, if the file has one
  std::string path;                              // where it was read from ("" if in memory)

  int num_layers() const { return static_cast<int>(layers.size()); }
  int num_heads() const { return layers.empty() ? 0 : static_cast<int>(layers[0].size()); }
};

// Reads and validates a weight file; InputError(file, field, expected) on any
// problem (unreadable, not JSON, missing or unknown fields, wrong types or
// shapes, non-finite numbers, unknown kind/attention, counts that disagree
// with the arrays, single-layer with layers != 1, factored and unfactored
// keys mixed in one head, "gate" missing from a gated head or present in a
// head of another kind, a "task" member of the wrong type or range). A
// .pt, .pth or .npz file (by name or by its first bytes: a zip archive, a
// pickle or a numpy array) is refused with the converter's command line.
WeightFile read_weight_file(const std::string& path);
// The same validation on an already parsed document; `file` names it in errors.
// Numbers in a document built in memory are doubles, taken exactly.
WeightFile weight_file_from_json(const nlohmann::json& doc, const std::string& file);
WeightFile weight_file_from_document(const internal::JsonDocument& doc);

// A = W_Q^T W_K and M = W_O W_V, computed in T from the exact entries (and
// the gate G = W_g entry by entry).
// With score_scale s != 1, A = s * (W_Q^T W_K): s multiplies the exact
// entries of W_Q (or of A), which are then made in T like any entry (exactly
// for Rational, enclosed for Mpfi, rounded once for double/Mpfr).
inline Matrix<Rational> scaled_scores(const Matrix<Rational>& x, const Rational& s) {
  if (s == 1) return x;
  return x.unaryExpr([&s](const Rational& v) { return Rational(v * s); });
}

template <class T>
Head<T> to_head(const HeadWeights& h, const Rational& score_scale = Rational(1)) {
  if (!h.factored) {
    // A = s * A_file
    return Head<T>{matrix_cast<T>(scaled_scores(h.A, score_scale)), matrix_cast<T>(h.M),
                   matrix_cast<T>(h.gate)};
  }
  // A = (s W_Q)^T W_K
  Matrix<T> A = matrix_product(matrix_cast<T>(scaled_scores(h.W_Q, score_scale)).transpose(),
                               matrix_cast<T>(h.W_K));
  // M = W_O W_V
  Matrix<T> M = matrix_product(matrix_cast<T>(h.W_O), matrix_cast<T>(h.W_V));
  return Head<T>{std::move(A), std::move(M), matrix_cast<T>(h.gate)};
}

template <class T>
Model<T> to_model(const WeightFile& w) {
  const Rational scale = w.task ? w.task->score_scale : Rational(1);
  Model<T> m;
  m.kind = w.kind;
  m.attention = w.attention;
  m.n = w.n;
  for (const auto& layer : w.layers) {
    m.layers.emplace_back();
    for (const auto& head : layer) m.layers.back().push_back(to_head<T>(head, scale));
  }
  return m;
}

// A file holding the model's (A, M) per head (unfactored; and G for gated
// attention, which must then be n x n), each entry the
// exact value of the model's (double, MPFR or rational) entry. Throws
// std::invalid_argument if the model is empty, ragged or non-finite.
WeightFile weight_file_from_model(const Model<double>& m, const nlohmann::json& metadata = nullptr);
WeightFile weight_file_from_model(const Model<Mpfr>& m, const nlohmann::json& metadata = nullptr);
WeightFile weight_file_from_model(const Model<Rational>& m,
                                  const nlohmann::json& metadata = nullptr);

// The file's text: fixed key order, one matrix row per line, every entry
// written as its exact decimal expansion (a JSON number), so that reading
// gives back exactly the same model (for a double, the identical bits).
std::string weight_file_text(const WeightFile& w);
// Writes weight_file_text(w) atomically (write_file_atomically).
void write_weight_file(const std::string& path, const WeightFile& w);

// The model's shape in words: "softmax, single-layer, n = 6, 1 layer(s) x
// 1 head(s)".
std::string describe(const WeightFile& w);
// The same as JSON: {"kind", "attention", "n", "layers", "heads"}.
nlohmann::json shape_json(const WeightFile& w);

}  // namespace sinkcert
