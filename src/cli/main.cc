// SPDX-License-Identifier: MIT
//
// sinkcert: exact, certified and numerical checks of the attention-sink
// theorems. Exit codes: 0 success (a checker ran and printed its verdict),
// 1 internal failure, 2 bad input (file, field or option), and a checker may
// return 3 for NOT VERIFIED / 4 for UNDECIDED (see each command).
#include <iostream>

#include "src/cli/commands.h"
#include "src/input_error.h"

int main(int argc, char** argv) {
  CLI::App app{"sinkcert: check theorems about attention sinks, exactly, certified or numerically"};
  app.require_subcommand(1);
  sinkcert::cli::Context ctx;
  ctx.argv.assign(argv, argv + argc);
  sinkcert::cli::add_eval_command(app, ctx);
  sinkcert::cli::add_verify_command(app, ctx);
  sinkcert::cli::add_theorem1_command(app, ctx);
  sinkcert::cli::add_appendix_command(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const sinkcert::InputError& e) {
    std::cerr << "sinkcert: error: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "sinkcert: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sinkcert: internal error: " << e.what() << "\n";
    return 1;
  }
  return ctx.exit_code;
}
