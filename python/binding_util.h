// SPDX-License-Identifier: MIT
//
// What the sources of the Python extension share: progress callbacks that
// may be called while the GIL is released (from any thread), and JSON to
// Python objects.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "src/weight_file.h"

namespace sinkcert::python {

namespace py = pybind11;

// A Python callable taking one string, callable from C++ without the GIL:
// each call acquires it. An exception raised by the callable is kept (its
// text) and rethrown by rethrow() once the C++ call is over, with the GIL
// held; later calls are skipped. Construct and destroy with the GIL held.
class Progress {
 public:
  explicit Progress(py::object callback) : state_(std::make_shared<State>()) {
    if (!callback.is_none()) state_->callback = std::move(callback);
  }
  bool active() const { return static_cast<bool>(state_->callback); }
  // Calls the callable with `line` (no-op without one, or after an error).
  void operator()(const std::string& line) const {
    if (!state_->callback) return;
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (!state_->error.empty()) return;
    py::gil_scoped_acquire gil;
    try {
      state_->callback(line);
    } catch (py::error_already_set& e) {
      state_->error = e.what();
    }
  }
  std::function<void(const std::string&)> function() const {
    if (!active()) return {};
    Progress copy = *this;
    return [copy](const std::string& line) { copy(line); };
  }
  void rethrow() const {
    if (!state_->error.empty()) throw std::runtime_error("progress callback: " + state_->error);
  }

 private:
  struct State {
    py::object callback;
    std::mutex mutex;
    std::string error;
  };
  std::shared_ptr<State> state_;
};

// A JSON value as the Python object json.loads would give.
inline py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

// The task of a call: n from the file, L and the trigger range given;
// std::invalid_argument (ValueError) when invalid.
Task make_task(const WeightFile& w, int L, const std::string& trigger_range);

}  // namespace sinkcert::python
