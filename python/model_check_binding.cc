// SPDX-License-Identifier: MIT
//
// Model.check: theorems/reports/model_check.h's check_model, for Python.
// Compiled only when that header exists (python/CMakeLists.txt defines
// SINKCERT_HAVE_MODEL_CHECK then); returns {"json": to_json() as Python
// objects, "summary": summary(), "markdown": markdown()}. tolerance and
// sink_bar are decimal texts (src/verdict_bars.h), a ValueError naming
// them when not.
#include <pybind11/pybind11.h>

#include <string>

#include "python/binding_util.h"
#include "src/verdict_bars.h"
#include "theorems/reports/model_check.h"

namespace sinkcert::python {

void bind_check(py::module_& m) {
  m.attr("HAVE_CHECK") = true;
  m.def(
      "check",
      [](const WeightFile& w, int L, const std::string& trigger_range, double seconds,
         std::uint64_t seed, int threads, const std::string& tolerance, const std::string& sink_bar,
         py::object progress) {
        const Task task = make_task(w, L, trigger_range);
        const Progress report(progress);
        theorems::CheckOptions o;
        o.seconds = seconds;
        o.seed = seed;
        o.threads = threads;
        o.bars = VerdictBars(tolerance, sink_bar);
        o.progress = report.function();
        py::dict d;
        {
          py::gil_scoped_release release;
          const theorems::CheckReport r = theorems::check_model(w, task, o);
          py::gil_scoped_acquire gil;
          d["json"] = to_python(r.to_json());
          d["summary"] = r.summary();
          d["markdown"] = r.markdown();
        }
        report.rethrow();
        return d;
      },
      py::arg("weights"), py::arg("L"), py::arg("trigger_range"), py::arg("seconds"),
      py::arg("seed"), py::arg("threads"), py::arg("tolerance"), py::arg("sink_bar"),
      py::arg("progress"));
}

}  // namespace sinkcert::python
