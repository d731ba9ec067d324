// SPDX-License-Identifier: MIT
#include "src/run_info.h"

#include <doctest/doctest.h>

namespace sinkcert {
namespace {

TEST_CASE("run info carries command line, revision, time, seed and precision") {
  const RunInfo info = make_run_info({"sinkcert", "appendix", "--full"}, 42, "double");
  CHECK(info.command_line == "sinkcert appendix --full");
  CHECK_FALSE(info.revision.empty());
  CHECK(info.time_utc.size() == 20);  // 2026-11-29T22:39:08Z
  const auto j = to_json(info);
  CHECK(j.at("seed") == 42);
  CHECK(j.at("precision") == "double");
  CHECK(j.at("command_line") == "sinkcert appendix --full");
}

}  // namespace
}  // namespace sinkcert
