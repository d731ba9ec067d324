// SPDX-License-Identifier: MIT
//
// Names of the attention and model kinds as they appear in files and on the
// command line.
#include "src/model.h"

#include <stdexcept>
#include <utility>

namespace sinkcert {

namespace {
const std::pair<AttentionKind, const char*> kAttentionNames[] = {
    {AttentionKind::kSoftmax, "softmax"},
    {AttentionKind::kRelu, "relu"},
    {AttentionKind::kReluCountAll, "relu-count-all"},
    {AttentionKind::kSoftmaxOffByOne, "softmax-off-by-one"},
    {AttentionKind::kSigmoid, "sigmoid"},
    {AttentionKind::kSoftpick, "softpick"},
    {AttentionKind::kGated, "gated"},
};
}  // namespace

std::string to_string(AttentionKind kind) {
  for (const auto& [k, name] : kAttentionNames) {
    if (k == kind) return name;
  }
  throw std::logic_error("unknown attention kind");
}

std::string attention_kind_names() {
  std::string out;
  for (const auto& [k, name] : kAttentionNames) {
    (void)k;
    out += out.empty() ? "" : ", ";
    out += name;
  }
  return out;
}

AttentionKind parse_attention_kind(const std::string& text) {
  for (const auto& [k, name] : kAttentionNames) {
    if (text == name) return k;
  }
  throw std::invalid_argument("'" + text + "': expected one of " + attention_kind_names());
}

std::string to_string(ModelKind kind) {
  return kind == ModelKind::kResidual ? "residual" : "single-layer";
}

ModelKind parse_model_kind(const std::string& text) {
  if (text == "single-layer") return ModelKind::kSingleLayer;
  if (text == "residual") return ModelKind::kResidual;
  throw std::invalid_argument("'" + text + "': expected 'single-layer' or 'residual'");
}

}  // namespace sinkcert
