// SPDX-License-Identifier: MIT
//
// Reading back a committed study's JSON (theorem1.json, theorem2.json) for
// the appendix: the task it ran on, its provenance and, for Theorem 2, its
// model shape. Nothing is recomputed. The file is the user's to edit, so
// every field is checked: an InputError names the file, the field and what
// was expected (a present field of the wrong type included), never another
// exception.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "src/run_info.h"
#include "src/task.h"

namespace sinkcert::theorems::reports {

// The study's task {n, L, trigger_range}; *info gets its provenance
// ("run_info", when present); `model`, when given, gets its "model" object,
// which must hold integer "layers" and "heads".
Task read_study_task(const std::string& json_path, RunInfo* info, nlohmann::json* model = nullptr);

}  // namespace sinkcert::theorems::reports
