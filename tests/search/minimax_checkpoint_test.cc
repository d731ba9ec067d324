// SPDX-License-Identifier: MIT
#include "search/minimax_checkpoint.h"

#include <doctest/doctest.h>

#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include "search/minimax.h"
#include "src/parameter_layout.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using testing::random_model;

std::vector<std::vector<double>> blocks_of(const Model<double>& m) {
  std::vector<std::vector<double>> out;
  for (const auto& layer : m.layers) {
    for (const auto& h : layer) {
      std::vector<double> a(h.A.size()), b(h.M.size());
      pack_row_major(h.A, a.data());
      pack_row_major(h.M, b.data());
      out.push_back(a);
      out.push_back(b);
    }
  }
  return out;
}

// A run of `rounds` rounds straight, and the same run stopped after `cut`
// rounds and continued from its checkpoint: the same iterates, bit for bit.
void same_run_when_resumed(const Model<double>& init, const Task& task, MinimaxOptions o, int cut,
                           int rounds) {
  testing::ScratchDir dir("minimax_checkpoint_test");
  o.target_loss = 0;
  o.max_rounds = rounds;
  const MinimaxResult straight = minimax(init, task, o);
  REQUIRE(static_cast<int>(straight.history.size()) == rounds);
  o.checkpoint = (dir.path / "run.json").string();
  o.max_rounds = cut;
  const MinimaxResult first = minimax(init, task, o);
  REQUIRE(static_cast<int>(first.history.size()) == cut);
  o.max_rounds = rounds;
  o.resume = true;
  const MinimaxResult resumed = minimax(init, task, o);
  REQUIRE(resumed.history.size() == straight.history.size());
  for (std::size_t k = 0; k < straight.history.size(); ++k) {
    CAPTURE(k);
    CHECK(resumed.history[k].round == straight.history[k].round);
    CHECK(resumed.history[k].worst_case == straight.history[k].worst_case);
    CHECK(resumed.history[k].active_max == straight.history[k].active_max);
    CHECK(resumed.history[k].active_size == straight.history[k].active_size);
    CHECK(resumed.history[k].event == straight.history[k].event);
  }
  CHECK(blocks_of(resumed.model) == blocks_of(straight.model));
  CHECK(resumed.worst.certified == straight.worst.certified);
  CHECK(resumed.jacobian_evaluations == straight.jacobian_evaluations);
  // the run continued from round cut + 1: the first cut rounds were not rerun
  CHECK(resumed.history[cut - 1].elapsed == first.history[cut - 1].elapsed);
  // without --resume the file is only written: a fresh run, the same result
  o.resume = false;
  const MinimaxResult again = minimax(init, task, o);
  CHECK(blocks_of(again.model) == blocks_of(straight.model));
}

TEST_CASE("a deep descent continued from its checkpoint takes the uninterrupted run's steps") {
  const Task task{5, 4, TriggerRange::kPaper};
  MinimaxOptions o;
  o.lm_iterations = 4;
  o.deep_threads = 2;
  same_run_when_resumed(
      random_model(task.n, AttentionKind::kSoftmax, 0.5, 3, 2, 2, ModelKind::kResidual), task, o, 2,
      5);
}

TEST_CASE("a Lawson search with a BOS ceiling continued from its checkpoint is the same run") {
  // the Lawson weights, the penalty rho and the previous objective are state
  const Task task{5, 4, TriggerRange::kPaper};
  const ProbeSet probes = make_probe_set(task, 50);
  MinimaxOptions o;
  o.surrogate = Surrogate::kLawson;
  o.probes = &probes;
  o.bos_ceiling = 0.5;
  same_run_when_resumed(random_model(task.n, AttentionKind::kSoftmax, 0.3, 4), task, o, 3, 6);
}

TEST_CASE("a checkpoint of another run, or a malformed one, is refused naming the field") {
  testing::ScratchDir dir("minimax_checkpoint_refusals");
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> init =
      random_model(task.n, AttentionKind::kSoftmax, 0.5, 3, 2, 2, ModelKind::kResidual);
  MinimaxOptions o;
  o.lm_iterations = 2;
  o.max_rounds = 1;
  o.checkpoint = (dir.path / "run.json").string();
  minimax(init, task, o);
  o.resume = true;
  o.max_rounds = 2;
  {
    MinimaxOptions other = o;
    other.seed = 7;
    CHECK_THROWS_WITH_AS(minimax(init, task, other), doctest::Contains("field identity"),
                         std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(
      minimax(random_model(task.n, AttentionKind::kSoftmax, 0.5, 4, 2, 2, ModelKind::kResidual),
              task, o),
      doctest::Contains("field init_hash"), std::invalid_argument);
  // a damaged file: one field removed, one of the wrong type
  MinimaxCheckpoint c = read_checkpoint(o.checkpoint);
  CHECK(c.round == 1);
  {
    std::ofstream(o.checkpoint) << "{\"format\": \"sinkcert minimax checkpoint\", \"version\": 1}";
    CHECK_THROWS_WITH_AS(read_checkpoint(o.checkpoint), doctest::Contains("field identity"),
                         std::runtime_error);
  }
  write_checkpoint(o.checkpoint, c);
  {
    std::ifstream in(o.checkpoint);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t at = text.find("\"radius\":");
    REQUIRE(at != std::string::npos);
    text.insert(at + 9, "\"wide\",\"was\":");
    std::ofstream(o.checkpoint) << text;
    CHECK_THROWS_WITH_AS(read_checkpoint(o.checkpoint), doctest::Contains("field radius"),
                         std::runtime_error);
  }
  // a missing file with --resume: a fresh run
  o.checkpoint = (dir.path / "absent.json").string();
  CHECK(minimax(init, task, o).history.size() == 2);
}

TEST_CASE("checkpoint numbers read back to the same doubles, non-finite ones included") {
  testing::ScratchDir dir("minimax_checkpoint_numbers");
  MinimaxCheckpoint c;
  c.identity = "x";
  c.init_hash = parameter_hash({{0.1, 0.2}});
  c.theta = {{0.1, 1.0 / 3.0, -5e-324, 1.7976931348623157e308}};
  c.best_theta = c.theta;
  c.best_feasible = std::numeric_limits<double>::infinity();
  c.best_witness.certified = std::numeric_limits<double>::quiet_NaN();
  c.radius = 2.0 / 7.0;
  const std::string path = (dir.path / "c.json").string();
  write_checkpoint(path, c);
  const MinimaxCheckpoint d = read_checkpoint(path);
  CHECK(d.theta == c.theta);
  CHECK(d.radius == c.radius);
  CHECK(d.best_feasible == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(d.best_witness.certified));
  CHECK(parameter_hash({{0.1, 0.2}}) != parameter_hash({{0.1, 0.2000000000000001}}));
}

}  // namespace
}  // namespace sinkcert::search
