// SPDX-License-Identifier: MIT
// sinkcert theorem1 (stub until its library lands).
#include "src/cli/commands.h"

namespace sinkcert::cli {
void add_theorem1_command(CLI::App& app, Context& ctx) {
  (void)ctx;
  app.add_subcommand("theorem1", "not yet implemented");
}
}  // namespace sinkcert::cli
