// SPDX-License-Identifier: MIT
// sinkcert eval (stub until the weight/input file readers land).
#include "src/cli/commands.h"

namespace sinkcert::cli {
void add_eval_command(CLI::App& app, Context& ctx) {
  (void)ctx;
  app.add_subcommand("eval", "evaluate a model on an input file or on sampled inputs");
}
}  // namespace sinkcert::cli
