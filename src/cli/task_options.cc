// SPDX-License-Identifier: MIT
//
// The --trigger-range, --n and --L options shared by the task-sized commands
// (verify relu, verify bound, theorem1), checked once with one set of
// messages.
#include "src/cli/commands.h"
#include "src/input_error.h"

namespace sinkcert::cli {

TriggerRange trigger_range_option(const std::string& text) {
  try {
    return parse_trigger_range(text);
  } catch (const std::invalid_argument&) {
    throw InputError("command line", "--trigger-range",
                     "paper or reference-code, got '" + text + "'");
  }
}

void check_task_options(const Task& task) {
  if (task.n < 3) {
    throw InputError("command line", "--n", "an integer >= 3, got " + std::to_string(task.n));
  }
  if (task.L < 2) {
    throw InputError("command line", "--L", "an integer >= 2, got " + std::to_string(task.L));
  }
  if (task.trigger_positions().empty()) {
    throw InputError("command line", "--L",
                     "L >= 3 under the reference-code convention (L = " + std::to_string(task.L) +
                         " has no trigger position)");
  }
}

}  // namespace sinkcert::cli
