// SPDX-License-Identifier: MIT
// sinkcert verify (stub until the ReLU checker lands).
#include "src/cli/commands.h"

namespace sinkcert::cli {
void add_verify_command(CLI::App& app, Context& ctx) {
  (void)ctx;
  app.add_subcommand("verify", "run a theorem checker");
}
}  // namespace sinkcert::cli
