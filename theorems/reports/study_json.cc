// SPDX-License-Identifier: MIT
#include "theorems/reports/study_json.h"

#include <stdexcept>

#include "src/input_error.h"
#include "src/json_reader.h"

namespace sinkcert::theorems::reports {

Task read_study_task(const std::string& json_path, RunInfo* info, nlohmann::json* model) {
  const nlohmann::json j = internal::read_json_file(json_path);
  const auto integer = [&](const nlohmann::json& at, const char* key, const std::string& where,
                           const std::string& what) {
    if (!at.is_object() || !at.contains(key) || !at[key].is_number_integer()) {
      throw InputError(json_path, where, what);
    }
    return at[key].get<int>();
  };
  const std::string task_what = "{n, L, trigger_range} (a study's JSON written by sinkcert)";
  if (!j.is_object() || !j.contains("task") || !j["task"].is_object()) {
    throw InputError(json_path, "task", task_what);
  }
  const nlohmann::json& t = j["task"];
  const int n = integer(t, "n", "task.n", "an integer (a study's JSON written by sinkcert)");
  const int L = integer(t, "L", "task.L", "an integer (a study's JSON written by sinkcert)");
  if (!t.contains("trigger_range") || !t["trigger_range"].is_string()) {
    throw InputError(json_path, "task.trigger_range", "\"paper\" or \"reference-code\"");
  }
  if (model) {
    const std::string what = "{layers, heads} (a theorem2.json written by sinkcert)";
    if (!j.contains("model")) throw InputError(json_path, "model", what);
    integer(j["model"], "layers", "model.layers", "an integer (" + what + ")");
    integer(j["model"], "heads", "model.heads", "an integer (" + what + ")");
    *model = j["model"];
  }
  *info = run_info_from_json(provenance_of(j));
  Task task{n, L, TriggerRange::kPaper};
  try {
    task.range = parse_trigger_range(t["trigger_range"].get<std::string>());
  } catch (const std::invalid_argument&) {
    throw InputError(json_path, "task.trigger_range", "\"paper\" or \"reference-code\"");
  }
  try {
    task.validate();
  } catch (const std::invalid_argument& e) {
    throw InputError(json_path, "task", std::string("a valid task: ") + e.what());
  }
  return task;
}

}  // namespace sinkcert::theorems::reports
