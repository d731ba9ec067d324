// SPDX-License-Identifier: MIT
//
// Where a study command (theorem1, theorem2, normalizations) writes: a new
// folder runs/<command>-<UTC YYYYmmdd-HHMMSS>/ unless --out names one, so
// that no run replaces the committed results/ unless asked. An --out folder
// that already holds files (a study) is refused unless --force is given.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "src/input_error.h"

namespace sinkcert::cli {

namespace fs = std::filesystem;

void add_study_out_options(CLI::App* app, StudyOut* out) {
  out->out_option = add_out_option(app, &out->out, OutputKind::kFolder,
                                   "output folder (default: a new folder runs/<command>-<UTC "
                                   "time>/; a folder that holds files needs --force)");
  app->add_flag("--force", out->force,
                "write into an --out folder that already holds a study, replacing its files");
  app->add_flag("--json", out->json,
                "print one JSON summary on stdout instead of the text (the study's own files are "
                "written as without it)");
}

StdoutMute::StdoutMute(bool on) {
  if (on) saved_ = std::cout.rdbuf(&sink_);
}

StdoutMute::~StdoutMute() {
  if (saved_ != nullptr) std::cout.rdbuf(saved_);
}

std::string default_run_folder(const std::string& command) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  return "runs/" + command + "-" + stamp;
}

std::string resolve_study_out(const StudyOut& out, const std::string& command) {
  std::error_code ec;
  if (out.out_option == nullptr || out.out_option->count() == 0) {
    std::string dir = default_run_folder(command);
    // a second run in the same second gets its own folder too
    for (int k = 2; fs::exists(dir, ec); ++k)
      dir = default_run_folder(command) + "-" + std::to_string(k);
    fs::create_directories("runs", ec);  // the check below names any failure
    std::cout << "writing to " << dir << "/ (a new folder; --out DIR to choose)\n";
    return dir;
  }
  if (!out.force && fs::is_directory(out.out, ec) && !fs::is_empty(out.out, ec)) {
    throw InputError("command line", "--out",
                     "an empty or new folder (" + out.out +
                         " already holds files, a study: --force replaces them)");
  }
  return out.out;
}

}  // namespace sinkcert::cli
