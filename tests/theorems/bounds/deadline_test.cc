// SPDX-License-Identifier: MIT
#include "theorems/bounds/deadline.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "theorems/bounds/progress_lines.h"

namespace sinkcert::theorems::bounds {
namespace {

TEST_CASE("a deadline: none, already passed, far away, and the earlier of two") {
  const Deadline none;
  CHECK_FALSE(none.expired());
  CHECK(std::isinf(none.remaining()));
  // infinite budgets (kNoTimeLimit) and NaN set no deadline
  CHECK_FALSE(Deadline::after(INFINITY).is_set());
  CHECK_FALSE(Deadline::after(NAN).is_set());
  const Deadline passed = Deadline::after(0);
  CHECK(passed.expired());
  CHECK(passed.remaining() == 0);
  CHECK(Deadline::after(-5).expired());
  const Deadline hour = Deadline::after(3600);
  CHECK_FALSE(hour.expired());
  CHECK(hour.remaining() > 3000);
  CHECK(Deadline::earlier(hour, passed).expired());
  CHECK(Deadline::earlier(passed, hour).expired());
  CHECK_FALSE(Deadline::earlier(none, hour).expired());
  CHECK(Deadline::earlier(hour, none).is_set());
  CHECK(hour.or_after(0).expired());
  CHECK_FALSE(none.or_after(3600).expired());
  CHECK(none.or_after(3600).is_set());
}

TEST_CASE("progress lines: none before the interval, then one per interval, with the time") {
  std::vector<std::string> lines;
  ProgressLines quiet([&](const std::string& l) { lines.push_back(l); }, 3600);
  CHECK_FALSE(quiet.due());
  quiet.maybe_send([] { return std::string("never"); });
  CHECK(lines.empty());
  ProgressLines every([&](const std::string& l) { lines.push_back(l); }, 0);
  CHECK(every.due());
  every.maybe_send([] { return std::string("E in [1, 2]"); });
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(" s: E in [1, 2]") != std::string::npos);
  ProgressLines no_sink;
  CHECK_FALSE(no_sink.due());
  no_sink.send("dropped");
  CHECK(lines.size() == 1);
  CHECK(progress_number(INFINITY) == "inf");
  CHECK(progress_number(0.012345) == "0.0123");
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
