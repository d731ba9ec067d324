// SPDX-License-Identifier: MIT
//
// sinkcert: exact, certified and numerical checks of the attention-sink
// theorems. Exit codes (commands.h): 0 success (a claim VERIFIED, a bound
// ENCLOSED to its gap, a command done), 1 internal failure, 2 bad input
// (file, field or option, a size beyond the limits of src/limits.h, memory
// exhausted anyway, or a checker NOT APPLICABLE to the model), a checker may
// return 3 for NOT VERIFIED / 4 for UNDECIDED or NOT ENCLOSED (see each
// command), and 5 when a floating-point evaluation produced a non-finite
// value (NaN or infinity: the precision cannot evaluate that model there;
// eval_command.cc).
// Every error is one line on stderr: "sinkcert: error: ...".
// Bare `sinkcert` prints the usage on stdout and that one error line
// ("missing subcommand ..."), exit 2; `sinkcert --version` the revision, the
// build type and the recipe kernels available; --quiet (at the top level or
// after any command) silences progress on stderr (progress.cc).
// Ceres reports recoverable solver events as glog warnings on stderr (e.g.
// "Linear solver failure", after which Levenberg-Marquardt shrinks its trust
// region and goes on); they are not errors, so glog shows only its errors
// unless the environment variable SINKCERT_SOLVER_LOG is set.
#include <glog/logging.h>

#include <cstdlib>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/commands.h"
#include "search/recipe_kernel.h"
#include "src/input_error.h"
#include "src/run_info.h"

namespace {

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// The subcommand the parse reached: the deepest one selected.
const CLI::App* selected_command(const CLI::App& root) {
  const CLI::App* app = &root;
  while (!app->get_subcommands().empty()) app = app->get_subcommands().front();
  return app;
}

// "eval", "verify relu"; empty for the top level.
std::string command_path(const CLI::App* app) {
  std::string path;
  for (; app != nullptr && app->get_parent() != nullptr; app = app->get_parent()) {
    path = app->get_name() + (path.empty() ? "" : " " + path);
  }
  return path;
}

std::string subcommand_list(const CLI::App* app) {
  std::string list;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    list += (list.empty() ? "" : ", ") + sub->get_name();
  }
  return list;
}

// One line for any CLI11 parse error: the unknown subcommand, option or
// argument named, the option whose value is missing with what it expects.
std::string parse_error_message(const CLI::App& root, const CLI::ParseError& e) {
  const CLI::App* app = selected_command(root);
  const std::string path = command_path(app);
  const std::string of = path.empty() ? "" : " of '" + path + "'";
  const std::vector<std::string> rest = root.remaining(true);
  const std::string first = rest.empty() ? "" : rest.front();
  const bool needs_subcommand = !app->get_subcommands([](const CLI::App*) { return true; }).empty();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // CLI11: "--seed: 1 required TEXT missing", "--seed: At Most 1 required
    // but received 2"
    const std::string what = e.what();
    const std::string name = what.substr(0, what.find(':'));
    const CLI::Option* opt = app->get_option_no_throw(name);
    if (what.find("At Most") != std::string::npos) {
      return "command line: " + name + ": given more than once";
    }
    const std::string* expected = opt != nullptr ? sinkcert::cli::expected_value(opt) : nullptr;
    return "command line: " + name + ": expected a value" +
           (expected != nullptr ? " (" + *expected + ")" : std::string()) + ", got none";
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
    // CLI11 converts flags only (every option value is parsed by sinkcert):
    // "Could not convert: --json = maybe"
    const std::string what = e.what();
    const std::size_t colon = what.find(": "), eq = what.find(" = ");
    if (colon != std::string::npos && eq != std::string::npos && eq > colon) {
      return "command line: " + what.substr(colon + 2, eq - colon - 2) +
             ": expected no value (a flag), got '" + what.substr(eq + 3) + "'";
    }
  }
  if (needs_subcommand) {
    const std::string expected = "expected one of " + subcommand_list(app);
    if (first.empty()) return "missing subcommand" + of + "; " + expected;
    if (first[0] == '-') return "unknown option '" + first + "'" + of + "; " + expected;
    return "unknown subcommand '" + first + "'" + of + "; " + expected;
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !first.empty()) {
    const std::string help = "; see sinkcert " + path + " --help";
    if (first[0] == '-') return "unknown option '" + first + "'" + of + help;
    return "unexpected argument '" + first + "'" + of + help;
  }
  return "command line: " + one_line(e.what());
}

int error(const std::string& message, int code) {
  std::cerr << "sinkcert: error: " << one_line(message) << "\n";
  return code;
}

#ifndef SINKCERT_BUILD_TYPE
#define SINKCERT_BUILD_TYPE ""
#endif

// "sinkcert <revision>", the build type and the recipe kernel compilations.
std::string version_text() {
  const std::string build = SINKCERT_BUILD_TYPE;
  return "sinkcert " + sinkcert::build_revision() +
         "\nbuild type: " + (build.empty() ? std::string("(none given)") : build) +
         "\nrecipe kernels: baseline" +
         (sinkcert::search::avx2_kernel_available()
              ? ", avx2+fma (built, and this CPU has AVX2 and FMA)"
              : " (avx2+fma not built or not supported by this CPU)") +
         "\n";
}

// --quiet on every command (and the top level), one flag.
void add_quiet_flags(CLI::App* app, bool* quiet) {
  app->add_flag("--quiet", *quiet, "no progress lines on stderr (errors are still printed)");
  for (CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    add_quiet_flags(sub, quiet);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("SINKCERT_SOLVER_LOG") == nullptr) FLAGS_minloglevel = google::GLOG_ERROR;
  CLI::App app{"sinkcert: check theorems about attention sinks, exactly, certified or numerically"};
  app.require_subcommand(1);
  sinkcert::cli::Context ctx;
  ctx.argv.assign(argv, argv + argc);
  sinkcert::cli::add_eval_command(app, ctx);
  sinkcert::cli::add_verify_command(app, ctx);
  sinkcert::cli::add_theorem1_command(app, ctx);
  sinkcert::cli::add_theorem2_command(app, ctx);
  sinkcert::cli::add_appendix_command(app, ctx);
  sinkcert::cli::add_attack_command(app, ctx);
  sinkcert::cli::add_sweep_command(app, ctx);
  sinkcert::cli::add_figures_command(app, ctx);
  sinkcert::cli::add_normalizations_command(app, ctx);
  sinkcert::cli::add_row1_below_command(app, ctx);
  sinkcert::cli::add_check_command(app, ctx);
  // provenance: the compilation of the recipe kernel this process runs
  try {
    sinkcert::set_recipe_kernel(sinkcert::search::to_string(
        sinkcert::search::resolve_recipe_isa(sinkcert::search::RecipeIsa::kAuto)));
  } catch (const std::invalid_argument& e) {
    sinkcert::set_recipe_kernel(std::string("none (") + one_line(e.what()) + ")");
  }
  sinkcert::cli::add_completion_command(app, ctx);
  add_quiet_flags(&app, &ctx.quiet);
  app.set_version_flag("--version", version_text, "print the revision, build type and kernels");
  app.footer(
      "Exit codes: 0 VERIFIED, ENCLOSED or done; 2 bad input, usage or NOT APPLICABLE; 3 NOT "
      "VERIFIED; 4 UNDECIDED or NOT ENCLOSED; 5 a non-finite value. Bare `sinkcert` prints this "
      "usage, exit 2.");
  if (argc <= 1) {
    std::cout << app.help();
    return error(parse_error_message(app, CLI::CallForHelp()), sinkcert::cli::kExitBadInput);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return error(parse_error_message(app, e), sinkcert::cli::kExitBadInput);
  } catch (const sinkcert::InputError& e) {
    return error(e.what(), sinkcert::cli::kExitBadInput);
  } catch (const std::invalid_argument& e) {
    return error(e.what(), sinkcert::cli::kExitBadInput);
  } catch (const std::bad_alloc&) {
    return error("out of memory" + (ctx.activity.empty() ? "" : " while " + ctx.activity) +
                     "; see the size limits in docs/commands.md (common to every command)",
                 sinkcert::cli::kExitBadInput);
  } catch (const std::length_error&) {
    return error("out of memory (a size beyond the library's limits)" +
                     (ctx.activity.empty() ? "" : " while " + ctx.activity) +
                     "; see the size limits in docs/commands.md (common to every command)",
                 sinkcert::cli::kExitBadInput);
  } catch (const std::exception& e) {
    std::cerr << "sinkcert: internal error: " << one_line(e.what()) << "\n";
    return sinkcert::cli::kExitInternal;
  }
  return ctx.exit_code;
}
