// SPDX-License-Identifier: MIT
//
// Command-line values, checked once with one set of messages: the
// range-checked option types every command registers (integers, seeds,
// finite reals, words), the options shared by the commands (the task's
// --n, --L, --trigger-range; --seed; --out) and the memory check. The ranges
// themselves live in src/limits.h. A bad value is an InputError naming the
// option, the valid range and the value given:
//   command line: --seed: expected an integer in [0, 18446744073709551615], got '-1'
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "app/commands.h"
#include "src/input_error.h"
#include "src/limits.h"
#include "src/verdict_bars.h"
#include "src/weight_file.h"

namespace sinkcert::cli {

namespace {

const std::string kCli = "command line";

// What each registered option expects, for the message when its value is
// missing (main.cc).
std::map<const CLI::Option*, std::string>& expected_registry() {
  static std::map<const CLI::Option*, std::string> registry;
  return registry;
}

// `type` is the placeholder --help shows (INT, REAL, FILE, ...).
CLI::Option* register_option(CLI::App* app, const std::string& name, const std::string& type,
                             const std::string& expected, const std::string& help,
                             std::function<void(const std::string&)> parse) {
  CLI::Option* opt =
      app->add_option_function<std::string>(name, std::move(parse), help + " (" + expected + ")");
  opt->type_name(type);
  expected_registry()[opt] = expected;
  return opt;
}

std::string real_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace

std::string integer_range_text(long long lo, long long hi) {
  return "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

long long parse_integer(const std::string& option, const std::string& text, long long lo,
                        long long hi) {
  const std::string expected = integer_range_text(lo, hi);
  const auto fail = [&] {
    throw InputError(kCli, option, "expected " + expected + ", got '" + text + "'");
  };
  std::size_t pos = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) pos = 1;
  if (pos == text.size()) fail();
  // |value| accumulated with a cap: anything beyond the range is refused
  // before it can overflow.
  unsigned long long magnitude = 0;
  constexpr unsigned long long kCap = 1ULL << 62;
  for (; pos < text.size(); ++pos) {
    if (text[pos] < '0' || text[pos] > '9') fail();
    magnitude = magnitude * 10 + static_cast<unsigned long long>(text[pos] - '0');
    if (magnitude > kCap) fail();
  }
  const long long value =
      negative ? -static_cast<long long>(magnitude) : static_cast<long long>(magnitude);
  if (value < lo || value > hi) fail();
  return value;
}

std::uint64_t parse_seed(const std::string& option, const std::string& text) {
  const std::string expected = "an integer in [0, " + std::to_string(kMaxSeed) + "]";
  const auto fail = [&] {
    throw InputError(kCli, option, "expected " + expected + ", got '" + text + "'");
  };
  if (text.empty()) fail();
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') fail();
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    // value * 10 + digit <= kMaxSeed
    if (value > (kMaxSeed - digit) / 10) fail();
    value = value * 10 + digit;
  }
  return value;
}

std::string RealRange::text() const {
  if (!has_hi) return std::string("a finite number ") + (lo_open ? "> " : ">= ") + real_text(lo);
  return std::string("a number in ") + (lo_open ? "(" : "[") + real_text(lo) + ", " +
         real_text(hi) + "]";
}

double parse_real(const std::string& option, const std::string& text, const RealRange& range) {
  const auto fail = [&] {
    throw InputError(kCli, option, "expected " + range.text() + ", got '" + text + "'");
  };
  // Decimal notation only: strtod would also read "nan", "inf", hexadecimal
  // floats and leading blanks. A value that overflows or underflows a
  // double sets ERANGE and is refused too.
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos) fail();
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(x)) fail();
  if (range.lo_open ? !(x > range.lo) : !(x >= range.lo)) fail();
  if (range.has_hi && !(x <= range.hi)) fail();
  return x;
}

CLI::Option* add_int_option(CLI::App* app, const std::string& name, int* target, int lo, int hi,
                            const std::string& help) {
  return register_option(app, name, "INT", integer_range_text(lo, hi), help,
                         [name, target, lo, hi](const std::string& text) {
                           *target = static_cast<int>(parse_integer(name, text, lo, hi));
                         });
}

CLI::Option* add_seed_option(CLI::App* app, std::uint64_t* target, const std::string& help) {
  return register_option(
      app, "--seed", "UINT64", "an integer in [0, " + std::to_string(kMaxSeed) + "]",
      help + ", default " + std::to_string(*target),
      [target](const std::string& text) { *target = parse_seed("--seed", text); });
}

CLI::Option* add_real_option(CLI::App* app, const std::string& name,
                             std::function<void(double)> set, const RealRange& range,
                             const std::string& help) {
  return register_option(
      app, name, "REAL", range.text(), help,
      [name, set, range](const std::string& text) { set(parse_real(name, text, range)); });
}

CLI::Option* add_real_option(CLI::App* app, const std::string& name, double* target,
                             const RealRange& range, const std::string& help) {
  return add_real_option(
      app, name, [target](double x) { *target = x; }, range, help);
}

CLI::Option* add_text_option(CLI::App* app, const std::string& name, std::string* target,
                             const std::string& expected, const std::string& help) {
  return register_option(app, name, expected == "a file name" ? "FILE" : "TEXT", expected, help,
                         [target](const std::string& text) { *target = text; });
}

const std::string* expected_value(const CLI::Option* option) {
  const auto& registry = expected_registry();
  const auto it = registry.find(option);
  return it == registry.end() ? nullptr : &it->second;
}

void add_verdict_bar_options(CLI::App* app, VerdictBars* bars, bool tolerance, bool sink_bar) {
  // one bar: its exact value and its text as written, an InputError naming
  // the option when the text is not a decimal in its range
  const auto add_bar = [app](const std::string& option, const std::string& expected,
                             const std::string& help, Rational* value, std::string* text,
                             Rational (*read)(const std::string&)) {
    register_option(app, option, "DECIMAL", expected, help,
                    [option, value, text, read](const std::string& written) {
                      try {
                        *value = read(written);
                      } catch (const std::invalid_argument& e) {
                        throw InputError(kCli, option, e.what());
                      }
                      *text = written;
                    });
  };
  if (tolerance) {
    add_bar("--tolerance", "a decimal number >= 0",
            std::string("the task counts as solved when the worst-case loss E <= this, exactly "
                        "as written; default ") +
                kDefaultTolerance + " (the paper's training target)",
            &bars->tolerance, &bars->tolerance_text, parse_tolerance);
  }
  if (sink_bar) {
    add_bar("--sink-bar", "a decimal number in (0, 1]",
            std::string("a head sinks when the BOS mass of every non-trigger row is at least "
                        "this, exactly as written; default ") +
                kDefaultSinkBar + " (at least half the attention on BOS)",
            &bars->sink_bar, &bars->sink_bar_text, parse_sink_bar);
  }
}

TriggerRange trigger_range_option(const std::string& text) {
  try {
    return parse_trigger_range(text);
  } catch (const std::invalid_argument&) {
    throw InputError(kCli, "--trigger-range",
                     "expected paper or reference-code, got '" + text + "'");
  }
}

void add_task_options(CLI::App* app, TaskOptions* task, const TaskOptionSpec& spec) {
  if (spec.max_n) {
    task->n_option = add_int_option(app, "--n", &task->n, kMinN, *spec.max_n, spec.n_help);
  }
  task->L_option = add_int_option(app, "--L", &task->L, kMinL, spec.max_L, spec.L_help);
  // the help names both conventions
  TriggerRange* range = &task->range;
  task->range_option = app->add_option_function<std::string>(
      "--trigger-range", [range](const std::string& text) { *range = trigger_range_option(text); },
      "paper (j in 1..L-1, default) or reference-code (j in 2..L-1)");
  task->range_option->type_name("CONVENTION");
  expected_registry()[task->range_option] = "paper or reference-code";
}

CLI::Option* add_out_option(CLI::App* app, std::string* out, OutputKind kind,
                            const std::string& help) {
  const std::string expected = kind == OutputKind::kFile ? "a file name" : "a folder name";
  return register_option(app, "--out", kind == OutputKind::kFile ? "FILE" : "DIR", expected,
                         out->empty() ? help : help + ", default " + *out,
                         [out](const std::string& text) { *out = text; });
}

void check_task_options(const Task& task) {
  if (task.n < kMinN) {
    throw InputError(kCli, "--n", "expected an integer >= 3, got " + std::to_string(task.n));
  }
  if (task.L < kMinL) {
    throw InputError(kCli, "--L", "expected an integer >= 2, got " + std::to_string(task.L));
  }
  if (task.trigger_positions().empty()) {
    throw InputError(kCli, "--L",
                     "L >= 3 under the reference-code convention (L = " + std::to_string(task.L) +
                         " has no trigger position)");
  }
}

Task resolve_task(const WeightFile& file, const TaskOptions& options) {
  const std::optional<WeightTask>& meta = file.task;
  const bool L_given = options.L_option && options.L_option->count() > 0;
  const bool range_given = options.range_option && options.range_option->count() > 0;
  Task task{file.n, options.L, options.range};
  if (meta && meta->L) {
    if (L_given && options.L != *meta->L) {
      throw InputError(kCli, "--L",
                       "the weight file's task.L = " + std::to_string(*meta->L) + " (" + file.path +
                           "; drop --L to use it), got " + std::to_string(options.L));
    }
    task.L = *meta->L;
  } else if (!L_given) {
    throw InputError(kCli, "--L",
                     "required: expected the sequence length L (" + file.path +
                         " has no \"task\": {\"L\": ...} to take it from)");
  }
  if (meta && meta->range) {
    if (range_given && options.range != *meta->range) {
      throw InputError(kCli, "--trigger-range",
                       "the weight file's task.trigger_range = " + to_string(*meta->range) + " (" +
                           file.path + "; drop --trigger-range to use it), got " +
                           to_string(options.range));
    }
    task.range = *meta->range;
  }
  check_task_options(task);
  return task;
}

std::string task_origin(const WeightFile& file, const TaskOptions& options) {
  const bool L_given = options.L_option && options.L_option->count() > 0;
  const bool range_given = options.range_option && options.range_option->count() > 0;
  const bool L_file = file.task && file.task->L;
  const bool range_file = file.task && file.task->range;
  const Task task = resolve_task(file, options);
  return "L = " + std::to_string(task.L) +
         (L_given && L_file ? " (--L, as in the weight file)"
          : L_given         ? " (--L)"
                            : " (from the weight file)") +
         ", trigger range " + to_string(task.range) +
         (range_given && range_file ? " (--trigger-range, as in the weight file)"
          : range_given             ? " (--trigger-range)"
          : range_file              ? " (from the weight file)"
                                    : " (default)");
}

void require_option(const CLI::Option* option) {
  if (option->count() > 0) return;
  const std::string* expected = expected_value(option);
  throw InputError(kCli, option->get_name(),
                   "required: expected " + (expected ? *expected : std::string("a value")));
}

int exit_code_for(Verdict verdict) {
  switch (verdict) {
    case Verdict::kVerified:
      return kExitSuccess;
    case Verdict::kNotVerified:
      return kExitNotVerified;
    case Verdict::kUndecided:
      return kExitUndecided;
    case Verdict::kEnclosed:
      return kExitSuccess;
    case Verdict::kNotEnclosed:
      return kExitUndecided;
    case Verdict::kNotApplicable:
      return kExitBadInput;
  }
  return kExitInternal;
}

void check_memory(const std::string& file, const std::string& field, double bytes,
                  const std::string& what) {
  if (bytes <= static_cast<double>(kMemoryBudgetBytes)) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s needs about %.3g GiB, more than the %zu GiB limit",
                what.c_str(), bytes / static_cast<double>(std::size_t{1} << 30),
                kMemoryBudgetBytes >> 30);
  throw InputError(file, field, buf);
}

}  // namespace sinkcert::cli
