// SPDX-License-Identifier: MIT
#include "theorems/reports/check_files.h"

#include <filesystem>

#include "src/input_error.h"
#include "src/input_file.h"
#include "src/output_files.h"
#include "src/table_writer.h"

namespace sinkcert::theorems::reports {

namespace {

// True when `path` lies in the folder results/ of the working directory.
bool under_results(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path results = fs::weakly_canonical(fs::current_path() / "results", ec);
  const fs::path target = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) return false;
  auto r = results.begin();
  auto t = target.begin();
  for (; r != results.end() && t != target.end(); ++r, ++t) {
    if (*r != *t) return false;
  }
  return r == results.end();
}

OutputSet check_set(const std::string& out) {
  const std::set<std::string> names = check_file_names();
  return OutputSet{out, [names](const std::string& name) {
                     return names.count(name) > 0 ? OutputSet::Kind::kFile
                                                  : OutputSet::Kind::kNotInSet;
                   }};
}

}  // namespace

std::set<std::string> check_file_names() {
  const std::string figure = kCheckFigure;
  return {"report.json",  "report.md",     "witness.json", figure + ".dat",
          figure + ".gp", figure + ".pdf", figure + ".png"};
}

void check_report_dir(const std::string& out, const std::string& option) {
  if (under_results(out)) {
    throw InputError("command line", option,
                     "a folder outside results/ (it holds the committed artifacts), got " + out);
  }
  check_output_set(check_set(out), option);
}

CheckFiles write_check_files(const CheckReport& report, const RunInfo& info,
                             const std::string& out) {
  CheckFiles files;
  files.document = report.to_json();
  files.document[kProvenanceKey] = to_json(info);
  replace_output_set(check_set(out), [&](const std::string& staging) {
    const auto path = [&](const std::string& name) {
      return (std::filesystem::path(staging) / name).string();
    };
    files.written.clear();
    write_file_atomically(path("report.json"), files.document.dump(2) + "\n");
    write_file_atomically(path("report.md"), report.markdown());
    files.written = {"report.json", "report.md"};
    if (report.witness_tokens.size() > 0) {
      write_input_file(path("witness.json"), report.witness_tokens);
      files.written.push_back("witness.json");
    }
    const FigureFiles figure = write_figure(report.heat_map, info, staging);
    for (const auto& p : figure.written) {
      files.written.push_back(std::filesystem::path(p).filename().string());
    }
    files.failures = figure.failures;
  });
  return files;
}

}  // namespace sinkcert::theorems::reports
