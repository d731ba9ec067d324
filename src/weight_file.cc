// SPDX-License-Identifier: MIT
//
// Reading, validating and writing weight files (format in weight_file.h).
#include "src/weight_file.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/limits.h"
#include "src/run_info.h"

namespace sinkcert {

namespace {

using json = nlohmann::json;
using internal::field_index;
using internal::field_join;

std::string dims(int r, int c) { return std::to_string(r) + " x " + std::to_string(c); }

HeadWeights read_head(const internal::JsonDocument& doc, const json& v, const std::string& field,
                      int n, AttentionKind attention) {
  const std::string& file = doc.file;
  internal::require_object(v, file, field);
  internal::reject_unknown_members(v, {"W_Q", "W_K", "W_V", "W_O", "A", "M", "gate"}, file, field);
  // the gate: required for gated attention, refused for every other kind
  const bool gated = attention == AttentionKind::kGated;
  if (gated && !v.contains("gate")) {
    throw InputError(file, field_join(field, "gate"),
                     "missing required field (a head of \"gated\" attention needs its gate "
                     "matrix W_g, n x n = " +
                         dims(n, n) + ")");
  }
  if (!gated && v.contains("gate")) {
    throw InputError(file, field_join(field, "gate"),
                     "no \"gate\" key: only \"gated\" attention has a gate (this file's "
                     "attention is \"" +
                         to_string(attention) + "\")");
  }
  Matrix<Rational> gate;
  if (gated) {
    gate = internal::require_rational_matrix(doc, v["gate"], field_join(field, "gate"), n, n,
                                             "n x n = " + dims(n, n));
  }
  const bool any_factor =
      v.contains("W_Q") || v.contains("W_K") || v.contains("W_V") || v.contains("W_O");
  const bool any_product = v.contains("A") || v.contains("M");
  if (any_factor && any_product) {
    throw InputError(file, field,
                     "expected either the factors W_Q, W_K, W_V, W_O or the products A, M, "
                     "not keys of both kinds in one head");
  }
  if (!any_factor && !any_product) {
    throw InputError(file, field, "expected the factors W_Q, W_K, W_V, W_O or the products A, M");
  }
  HeadWeights h;
  h.factored = any_factor;
  h.gate = std::move(gate);
  const std::string nn = "n x n = " + dims(n, n);
  if (!h.factored) {
    const json& A = internal::require_member(v, "A", file, field);
    const json& M = internal::require_member(v, "M", file, field);
    h.A = internal::require_rational_matrix(doc, A, field_join(field, "A"), n, n, nn);
    h.M = internal::require_rational_matrix(doc, M, field_join(field, "M"), n, n, nn);
    return h;
  }
  for (const char* key : {"W_Q", "W_K", "W_V", "W_O"}) {
    if (!v.contains(key)) {
      throw InputError(file, field_join(field, key),
                       "missing required field (a factored head needs W_Q, W_K, W_V and W_O)");
    }
  }
  // d_k and d_v are free up to kMaxN, checked before anything is allocated.
  for (const char* key : {"W_Q", "W_V"}) {
    if (v[key].is_array() && v[key].size() > static_cast<std::size_t>(kMaxN)) {
      throw InputError(file, field_join(field, key),
                       std::string("expected at most ") + std::to_string(kMaxN) + " rows (" +
                           (key[2] == 'Q' ? "d_k" : "d_v") + " <= " + std::to_string(kMaxN) +
                           "), got " + std::to_string(v[key].size()));
    }
  }
  // W_Q: d_k x n, d_k free; W_K must match it.
  h.W_Q = internal::require_rational_matrix(doc, v["W_Q"], field_join(field, "W_Q"), -1, n,
                                            "d_k x n (n = " + std::to_string(n) + ")");
  const int dk = static_cast<int>(h.W_Q.rows());
  h.W_K = internal::require_rational_matrix(doc, v["W_K"], field_join(field, "W_K"), dk, n,
                                            "d_k x n = " + dims(dk, n) + " (the shape of W_Q)");
  // W_V: d_v x n, d_v free; W_O: n x d_v.
  h.W_V = internal::require_rational_matrix(doc, v["W_V"], field_join(field, "W_V"), -1, n,
                                            "d_v x n (n = " + std::to_string(n) + ")");
  const int dv = static_cast<int>(h.W_V.rows());
  h.W_O = internal::require_rational_matrix(doc, v["W_O"], field_join(field, "W_O"), n, dv,
                                            "n x d_v = " + dims(n, dv) + " (d_v = rows of W_V)");
  return h;
}

// The optional "task" object (weight_file.h).
WeightTask read_task(const internal::JsonDocument& doc, const json& v) {
  const std::string& file = doc.file;
  internal::require_object(v, file, "task");
  internal::reject_unknown_members(v, {"L", "trigger_range", "score_scale", "source"}, file,
                                   "task");
  WeightTask t;
  if (v.contains("L")) t.L = internal::require_int(v["L"], file, "task.L", kMinL, kMaxL);
  if (v.contains("trigger_range")) {
    const std::string text =
        internal::require_string(v["trigger_range"], file, "task.trigger_range");
    try {
      t.range = parse_trigger_range(text);
    } catch (const std::invalid_argument&) {
      throw InputError(file, "task.trigger_range",
                       "expected \"paper\" or \"reference-code\", got \"" + text + "\"");
    }
  }
  if (v.contains("score_scale")) {
    t.score_scale = internal::require_rational(doc, v["score_scale"], "task.score_scale");
    if (t.score_scale <= 0) {
      throw InputError(file, "task.score_scale",
                       "expected a number > 0 (the factor of every score, e.g. 0.25 for "
                       "1/sqrt(16)), got " +
                           internal::exact_decimal(t.score_scale));
    }
  }
  if (v.contains("source")) t.source = internal::require_string(v["source"], file, "task.source");
  return t;
}

template <class F>
auto parse_enum(const json& v, const std::string& file, const std::string& field, F parse) {
  const std::string text = internal::require_string(v, file, field);
  try {
    return parse(text);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, field, e.what());
  }
}

}  // namespace

WeightFile weight_file_from_json(const json& root, const std::string& file) {
  internal::JsonDocument parsed;
  parsed.root = root;
  parsed.file = file;
  return weight_file_from_document(parsed);
}

WeightFile weight_file_from_document(const internal::JsonDocument& parsed) {
  const json& doc = parsed.root;
  const std::string& file = parsed.file;
  internal::require_object(doc, file, "");
  internal::reject_unknown_members(doc,
                                   {"format", "version", "kind", "attention", "n", "layers",
                                    "heads", "weights", "metadata", "task"},
                                   file, "");
  const std::string format =
      internal::require_string(internal::require_member(doc, "format", file, ""), file, "format");
  if (format != kWeightFormat) {
    throw InputError(file, "format",
                     std::string("expected \"") + kWeightFormat + "\", got \"" + format + "\"");
  }
  internal::require_int(internal::require_member(doc, "version", file, ""), file, "version",
                        kWeightFormatVersion, kWeightFormatVersion);
  WeightFile w;
  w.path = file;
  w.kind =
      parse_enum(internal::require_member(doc, "kind", file, ""), file, "kind", parse_model_kind);
  w.attention = parse_enum(internal::require_member(doc, "attention", file, ""), file, "attention",
                           parse_attention_kind);
  w.n = internal::require_int(internal::require_member(doc, "n", file, ""), file, "n", 3, kMaxN);
  const int layers = internal::require_int(internal::require_member(doc, "layers", file, ""), file,
                                           "layers", 1, kMaxLayers);
  const int heads = internal::require_int(internal::require_member(doc, "heads", file, ""), file,
                                          "heads", 1, kMaxHeads);
  if (w.kind == ModelKind::kSingleLayer && layers != 1) {
    throw InputError(file, "layers",
                     "expected 1 for kind \"single-layer\" (use kind \"residual\" for "
                     "several layers), got " +
                         std::to_string(layers));
  }
  const json& weights = internal::require_member(doc, "weights", file, "");
  if (!weights.is_array() || static_cast<int>(weights.size()) != layers) {
    throw InputError(file, "weights",
                     "expected an array of layers = " + std::to_string(layers) + " layers, got " +
                         (weights.is_array() ? std::to_string(weights.size()) + " layers"
                                             : internal::json_type_name(weights)));
  }
  for (int l = 0; l < layers; ++l) {
    const std::string lf = field_index("weights", l);
    const json& layer = weights[l];
    if (!layer.is_array() || static_cast<int>(layer.size()) != heads) {
      throw InputError(file, lf,
                       "expected an array of heads = " + std::to_string(heads) + " heads, got " +
                           (layer.is_array() ? std::to_string(layer.size()) + " heads"
                                             : internal::json_type_name(layer)));
    }
    w.layers.emplace_back();
    for (int h = 0; h < heads; ++h) {
      w.layers.back().push_back(read_head(parsed, layer[h], field_index(lf, h), w.n, w.attention));
    }
  }
  if (doc.contains("metadata")) w.metadata = doc["metadata"];
  if (doc.contains("task")) w.task = read_task(parsed, doc["task"]);
  return w;
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A PyTorch or numpy file, by its name or its first bytes: a zip archive
// (torch.save since 1.6, numpy.savez) "PK\3\4", a pickle (older torch.save)
// 0x80 then a protocol byte, a numpy array "\x93NUMPY".
bool looks_like_tensor_file(const std::string& path) {
  for (const char* ext : {".pt", ".pth", ".npz", ".npy"}) {
    if (ends_with(path, ext)) return true;
  }
  std::ifstream in(path, std::ios::binary);
  char head[6] = {};
  if (!in.read(head, sizeof head)) return false;
  const std::string h(head, sizeof head);
  return h.compare(0, 4, std::string("PK\x03\x04", 4)) == 0 ||
         (static_cast<unsigned char>(h[0]) == 0x80 && h[1] >= 2 && h[1] <= 5) || h == "\x93NUMPY";
}

}  // namespace

WeightFile read_weight_file(const std::string& path) {
  if (looks_like_tensor_file(path)) {
    std::string json_name = path;
    for (const char* ext : {".pt", ".pth", ".npz", ".npy"}) {
      if (ends_with(path, ext)) json_name = path.substr(0, path.size() - std::strlen(ext));
    }
    json_name += ".json";
    throw InputError(path, "(file)",
                     "expected a sinkcert weight file (JSON); " + path +
                         " looks like a PyTorch/numpy file: convert it first with python3 "
                         "scripts/convert_pytorch.py " +
                         path + " " + json_name);
  }
  return weight_file_from_document(internal::read_json_document(path));
}

namespace {

template <class T>
WeightFile weight_file_from_any_model(const Model<T>& m, const json& metadata) {
  if (m.layers.empty() || m.num_heads() == 0) {
    throw std::invalid_argument("weight_file_from_model: the model has no heads");
  }
  if (m.kind == ModelKind::kSingleLayer && m.num_layers() != 1) {
    throw std::invalid_argument("weight_file_from_model: a single-layer model with " +
                                std::to_string(m.num_layers()) + " layers");
  }
  WeightFile w;
  w.kind = m.kind;
  w.attention = m.attention;
  w.n = m.n;
  w.metadata = metadata;
  const auto exact = [](const Matrix<T>& x) {
    for (int r = 0; r < x.rows(); ++r) {
      for (int c = 0; c < x.cols(); ++c) {
        if (is_nan(x(r, c)) || !std::isfinite(to_double(x(r, c)))) {
          throw std::invalid_argument("weight_file_from_model: a non-finite entry");
        }
      }
    }
    return matrix_cast<Rational>(x);
  };
  for (const auto& layer : m.layers) {
    if (static_cast<int>(layer.size()) != m.num_heads()) {
      throw std::invalid_argument("weight_file_from_model: layers have different head counts");
    }
    w.layers.emplace_back();
    for (const auto& head : layer) {
      if (head.A.rows() != m.n || head.A.cols() != m.n || head.M.rows() != m.n ||
          head.M.cols() != m.n) {
        throw std::invalid_argument("weight_file_from_model: a head is not n x n");
      }
      HeadWeights hw;
      hw.factored = false;
      hw.A = exact(head.A);
      hw.M = exact(head.M);
      if (m.attention == AttentionKind::kGated) {
        if (head.G.rows() != m.n || head.G.cols() != m.n) {
          throw std::invalid_argument("weight_file_from_model: a gated head's gate is not n x n");
        }
        hw.gate = exact(head.G);
      }
      w.layers.back().push_back(std::move(hw));
    }
  }
  return w;
}

}  // namespace

WeightFile weight_file_from_model(const Model<double>& m, const json& metadata) {
  return weight_file_from_any_model(m, metadata);
}
WeightFile weight_file_from_model(const Model<Mpfr>& m, const json& metadata) {
  return weight_file_from_any_model(m, metadata);
}
WeightFile weight_file_from_model(const Model<Rational>& m, const json& metadata) {
  return weight_file_from_any_model(m, metadata);
}

std::string weight_file_text(const WeightFile& w) {
  const auto quoted = [](const std::string& s) { return json(s).dump(); };
  std::string out = "{\n";
  out += "  \"format\": " + quoted(kWeightFormat) + ",\n";
  out += "  \"version\": " + std::to_string(kWeightFormatVersion) + ",\n";
  out += "  \"kind\": " + quoted(to_string(w.kind)) + ",\n";
  out += "  \"attention\": " + quoted(to_string(w.attention)) + ",\n";
  out += "  \"n\": " + std::to_string(w.n) + ",\n";
  out += "  \"layers\": " + std::to_string(w.num_layers()) + ",\n";
  out += "  \"heads\": " + std::to_string(w.num_heads()) + ",\n";
  out += "  \"weights\": [\n";
  for (int l = 0; l < w.num_layers(); ++l) {
    out += "    [\n";
    const auto& layer = w.layers[l];
    for (std::size_t h = 0; h < layer.size(); ++h) {
      const HeadWeights& hw = layer[h];
      std::vector<std::pair<const char*, const Matrix<Rational>*>> mats;
      if (hw.factored) {
        mats = {{"W_Q", &hw.W_Q}, {"W_K", &hw.W_K}, {"W_V", &hw.W_V}, {"W_O", &hw.W_O}};
      } else {
        mats = {{"A", &hw.A}, {"M", &hw.M}};
      }
      if (hw.gate.size() > 0) mats.push_back({"gate", &hw.gate});
      out += "      {\n";
      for (std::size_t k = 0; k < mats.size(); ++k) {
        out += std::string("        \"") + mats[k].first +
               "\": " + internal::format_exact_matrix(*mats[k].second, 8) +
               (k + 1 < mats.size() ? ",\n" : "\n");
      }
      out += h + 1 < layer.size() ? "      },\n" : "      }\n";
    }
    out += l + 1 < w.num_layers() ? "    ],\n" : "    ]\n";
  }
  out += "  ]";
  if (w.task) {
    json task = json::object();
    if (w.task->L) task["L"] = *w.task->L;
    if (w.task->range) task["trigger_range"] = to_string(*w.task->range);
    if (!w.task->source.empty()) task["source"] = w.task->source;
    std::string text = task.dump();
    // the scale as its exact decimal (a JSON number), so it reads back exactly
    if (w.task->score_scale != 1) {
      text.insert(text.size() - 1, std::string(task.empty() ? "" : ",") + "\"score_scale\":" +
                                       internal::exact_decimal(w.task->score_scale));
    }
    out += ",\n  \"task\": " + text;
  }
  if (!w.metadata.is_null()) {
    std::string meta = w.metadata.dump(2);
    std::string indented;
    for (char c : meta) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
    out += ",\n  \"metadata\": " + indented;
  }
  return out + "\n}\n";
}

void write_weight_file(const std::string& path, const WeightFile& w) {
  write_file_atomically(path, weight_file_text(w));
}

std::string describe(const WeightFile& w) {
  return to_string(w.attention) + ", " + to_string(w.kind) + ", n = " + std::to_string(w.n) + ", " +
         std::to_string(w.num_layers()) + " layer(s) x " + std::to_string(w.num_heads()) +
         " head(s)";
}

nlohmann::json shape_json(const WeightFile& w) {
  return {{"kind", to_string(w.kind)},
          {"attention", to_string(w.attention)},
          {"n", w.n},
          {"layers", w.num_layers()},
          {"heads", w.num_heads()}};
}

}  // namespace sinkcert
