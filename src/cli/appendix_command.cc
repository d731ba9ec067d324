// SPDX-License-Identifier: MIT
// sinkcert appendix (stub until its library lands).
#include "src/cli/commands.h"

namespace sinkcert::cli {
void add_appendix_command(CLI::App& app, Context& ctx) {
  (void)ctx;
  app.add_subcommand("appendix", "not yet implemented");
}
}  // namespace sinkcert::cli
