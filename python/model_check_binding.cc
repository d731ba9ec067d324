// SPDX-License-Identifier: MIT
//
// Model.check: theorems/reports/model_check.h's check_model, for Python.
// Compiled only when that header exists (python/CMakeLists.txt defines
// SINKCERT_HAVE_MODEL_CHECK then); returns {"json": to_json() as Python
// objects, "summary": summary(), "markdown": markdown()}, and with `out` a
// folder, the files of `sinkcert check --out` written there by the same
// function (theorems/reports/check_files.h): "json" is then report.json's
// document (with its provenance), "out" the folder, "written" the names
// written and "failures" the renders gnuplot could not make. tolerance and
// sink_bar are decimal texts (src/verdict_bars.h), a ValueError naming
// them when not.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "python/binding_util.h"
#include "src/run_info.h"
#include "src/verdict_bars.h"
#include "theorems/reports/check_files.h"
#include "theorems/reports/model_check.h"

namespace sinkcert::python {

void bind_check(py::module_& m) {
  m.attr("HAVE_CHECK") = true;
  m.def(
      "check",
      [](const WeightFile& w, int L, const std::string& trigger_range, double seconds,
         std::uint64_t seed, int threads, const std::string& tolerance, const std::string& sink_bar,
         std::optional<std::string> out, py::object progress) {
        const Task task = make_task(w, L, trigger_range);
        if (out) theorems::reports::check_report_dir(*out, "out");
        const Progress report(progress);
        theorems::reports::CheckOptions o;
        o.seconds = seconds;
        o.seed = seed;
        o.threads = threads;
        o.bars = VerdictBars(tolerance, sink_bar);
        o.progress = report.function();
        py::dict d;
        {
          py::gil_scoped_release release;
          const theorems::reports::CheckReport r = theorems::reports::check_model(w, task, o);
          std::optional<theorems::reports::CheckFiles> files;
          if (out) {
            const RunInfo info = make_run_info({"python: Model.check(out=" + *out + ")"}, seed,
                                               "exact model; double search, mpfi bounds");
            files = theorems::reports::write_check_files(r, info, *out);
          }
          py::gil_scoped_acquire gil;
          d["json"] = to_python(files ? files->document : r.to_json());
          d["summary"] = r.summary();
          d["markdown"] = r.markdown();
          d["out"] = out ? py::cast(*out) : py::none();
          d["written"] = files ? py::cast(files->written) : py::cast(std::vector<std::string>());
          d["failures"] = files ? py::cast(files->failures) : py::cast(std::vector<std::string>());
        }
        report.rethrow();
        return d;
      },
      py::arg("weights"), py::arg("L"), py::arg("trigger_range"), py::arg("seconds"),
      py::arg("seed"), py::arg("threads"), py::arg("tolerance"), py::arg("sink_bar"),
      py::arg("out"), py::arg("progress"));
}

}  // namespace sinkcert::python
