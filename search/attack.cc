// SPDX-License-Identifier: MIT
#include "search/attack.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "src/table_writer.h"

namespace sinkcert::search {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Seed of round r (header: s_r = seed + r, wrapping modulo 2^64).
std::uint64_t round_seed(std::uint64_t seed, int r) { return seed + static_cast<std::uint64_t>(r); }

// The certified value as an order: NaN (nothing certified) ranks last.
double rank_key(const Witness& w, bool bos) {
  if (std::isnan(w.certified)) {
    return bos ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  return w.certified;
}

}  // namespace

std::string to_string(FoundBy by) {
  switch (by) {
    case FoundBy::kGradient:
      return "gradient adversary";
    case FoundBy::kVertex:
      return "vertex search";
    case FoundBy::kShared:
      return "vertex search from another trigger";
  }
  return "?";
}

Matrix<double> witness_tokens(const Task& task, const Witness& w) {
  return make_input<double>(task, w.trigger, w.content);
}

AttackResult attack(const Model<double>& model, const Model<Rational>& exact, const Task& task,
                    const AttackOptions& o, const AttackProgress& progress) {
  task.validate();
  if (model.n != task.n || exact.n != task.n) {
    throw std::invalid_argument("model and task dimensions differ");
  }
  const Clock::time_point t0 = Clock::now();
  const bool bos = o.quantity == WitnessQuantity::kBosMass;
  const auto better = [bos](const Witness& a, const Witness& b) {
    return bos ? a.value < b.value : a.value > b.value;
  };
  AttackResult result;
  result.quantity = o.quantity;
  result.evidence = Evidence::search(bos ? Bound::kUpper : Bound::kLower);
  const std::vector<int> triggers = o.triggers.empty() ? task.trigger_positions() : o.triggers;
  if (triggers.empty()) throw std::invalid_argument("the trigger-range convention has no position");
  std::vector<Witness> round0;  // round 0's witnesses, kept when later rounds run
  double last_line = -kAttackProgressSeconds;
  const auto report = [&](int round, const char* step) {
    const double t = since(t0);
    if (!progress || t < kAttackProgressAfterSeconds || t - last_line < kAttackProgressSeconds) {
      return;
    }
    last_line = t;
    double best =
        bos ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
    for (const Witness& w : result.per_trigger)
      best = bos ? std::min(best, w.value) : std::max(best, w.value);
    char buf[192];
    std::snprintf(buf, sizeof buf,
                  "round %d, %s: best %s %.3g so far [NUMERIC(53), certified at the end], %ld "
                  "forward passes, %.1f s",
                  round, step, bos ? "BOS mass" : "e(X)", best, result.evaluations, t);
    std::string line = buf;
    if (o.seconds > 0) {
      std::snprintf(buf, sizeof buf, ", %.1f s left", std::max(0.0, o.seconds - t));
      line += buf;
    }
    progress(line);
  };
  for (int r = 0; r == 0 || (o.seconds > 0 && since(t0) < o.seconds); ++r) {
    // 1. the gradient adversary
    AdversaryOptions ao = o.adversary;
    ao.seed = round_seed(o.seed, r);
    ao.triggers = triggers;
    ao.certify = false;  // the witnesses kept are certified at the end, on the exact model
    for (const Witness& w : result.per_trigger) ao.warm_starts.emplace_back(w.trigger, w.content);
    const AdversaryResult adv =
        bos ? minimize_bos_mass(model, task, ao) : maximize_error(model, task, ao);
    result.evaluations += adv.evaluations;
    const auto merge = [&](const std::vector<Witness>& found, FoundBy by) {
      for (const Witness& w : found) {
        const auto slot = std::find(triggers.begin(), triggers.end(), w.trigger) - triggers.begin();
        if (static_cast<std::size_t>(slot) >= result.per_trigger.size()) continue;
        if (better(w, result.per_trigger[slot])) {
          result.per_trigger[slot] = w;
          result.found_by[slot] = by;
        }
      }
    };
    if (result.per_trigger.empty()) {
      // round 0: the adversary returns one witness per trigger, in order
      result.per_trigger = adv.per_trigger;
      result.found_by.assign(result.per_trigger.size(), FoundBy::kGradient);
    } else {
      merge(adv.per_trigger, FoundBy::kGradient);
    }
    report(r, "gradient adversary done");
    // 2. the vertex search from the adversary's witnesses and random vertices
    if (o.vertex_search) {
      VertexSearchOptions vo = o.vertex;
      vo.seed = round_seed(o.seed, r);
      vo.triggers = triggers;
      const VertexSearchResult vs = vertex_search(model, task, adv.per_trigger, o.quantity, vo);
      result.evaluations += vs.evaluations;
      result.screened_moves += vs.screened_moves;
      merge(vs.per_trigger, FoundBy::kVertex);
      report(r, "vertex search done");
      // 3. every trigger's best shared with the others as vertex-search starts
      VertexSearchResult shared;
      const std::vector<bool> replaced =
          share_across_triggers(model, task, result.per_trigger, o.quantity, vo, &shared);
      result.evaluations += shared.evaluations;
      result.screened_moves += shared.screened_moves;
      for (std::size_t t = 0; t < replaced.size(); ++t) {
        if (replaced[t]) result.found_by[t] = FoundBy::kShared;
      }
      report(r, "shared starts done");
    }
    if (r == 0 && o.seconds > 0) round0 = result.per_trigger;
    result.rounds = r + 1;
  }
  // certification on the exact model (adversary.h, certify_witness)
  for (Witness& w : result.per_trigger) {
    w.certified = std::numeric_limits<double>::quiet_NaN();
    certify_witness(exact, task, w, o.quantity);
  }
  // A later round replaces a witness only on a better double value; its
  // certified value could still fall below round 0's by rounding. Round 0's
  // witness is certified too and kept where it certifies better, so a time
  // budget never returns less than the default round.
  if (result.rounds > 1) {
    for (std::size_t t = 0; t < round0.size() && t < result.per_trigger.size(); ++t) {
      Witness w = round0[t];
      w.certified = std::numeric_limits<double>::quiet_NaN();
      certify_witness(exact, task, w, o.quantity);
      const double a = rank_key(w, bos), b = rank_key(result.per_trigger[t], bos);
      if (bos ? a < b : a > b) result.per_trigger[t] = w;
    }
  }
  result.best = result.per_trigger.front();
  for (const Witness& w : result.per_trigger) {
    const double a = rank_key(w, bos), b = rank_key(result.best, bos);
    if (bos ? a < b : a > b) result.best = w;
  }
  result.seconds = since(t0);
  return result;
}

std::string format_certified(const AttackResult& r, double value, int digits) {
  if (std::isnan(value)) return "nan";
  PrecisionScope scope(64);  // holds the double exactly
  return r.quantity == WitnessQuantity::kBosMass ? format_up(Mpfr(value), digits)
                                                 : format_down(Mpfr(value), digits);
}

namespace {

// "trigger j = 3, row i = 3, coordinate d = 5" / "..., layer 0, head 1"
std::string where(const AttackResult& r, const Witness& w) {
  std::string s =
      "trigger j = " + std::to_string(w.trigger) + ", row i = " + std::to_string(w.position);
  if (r.quantity == WitnessQuantity::kBosMass) {
    return s + ", layer " + std::to_string(w.layer) + ", head " + std::to_string(w.coordinate);
  }
  return s + ", coordinate d = " + std::to_string(w.coordinate);
}

std::string double_text(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// Significant digits printed: 6 for an error; 13 for a BOS mass, which
// sits near 1 for trained models (1 - 3e-12 needs 12 digits to show).
int summary_digits(const AttackResult& r) {
  return r.quantity == WitnessQuantity::kBosMass ? 13 : 6;
}

}  // namespace

std::string summary_text(const AttackResult& r) {
  const bool bos = r.quantity == WitnessQuantity::kBosMass;
  const std::string label = r.evidence.label();
  std::string s;
  if (bos) {
    s += "smallest non-trigger BOS mass found: min a_i0 <= " +
         format_certified(r, r.best.certified, summary_digits(r)) + " " + label + "\n";
  } else {
    s += "worst case found: E >= " + format_certified(r, r.best.certified, summary_digits(r)) +
         " " + label + "\n";
  }
  s += "  at " + where(r, r.best) + "\n";
  s += "  certified: the witness re-evaluated in MPFI at " + std::to_string(r.best.certified_bits) +
       " bits on the exact model, " + (bos ? "upper end rounded up" : "lower end rounded down") +
       "; double value " + double_text(r.best.value) + " NUMERIC(53)" +
       (r.best.double_disagrees ? " (differs in the first digit)" : "") + "\n";
  s += std::string("best per trigger position (") + label + "):\n";
  for (std::size_t t = 0; t < r.per_trigger.size(); ++t) {
    const Witness& w = r.per_trigger[t];
    char buf[64];
    std::snprintf(buf, sizeof buf, "  j = %2d: ", w.trigger);
    s += buf + format_certified(r, w.certified, summary_digits(r)) +
         " at row i = " + std::to_string(w.position) +
         (bos ? ", layer " + std::to_string(w.layer) + ", head " + std::to_string(w.coordinate)
              : ", coordinate d = " + std::to_string(w.coordinate)) +
         " (" + to_string(r.found_by[t]) + ")\n";
  }
  char buf[128];
  std::snprintf(buf, sizeof buf,
                "search: %d round(s), %ld forward passes, %ld vertex moves screened, %.1f s\n",
                r.rounds, r.evaluations, r.screened_moves, r.seconds);
  s += buf;
  return s;
}

nlohmann::json to_json(const AttackResult& r) {
  const bool bos = r.quantity == WitnessQuantity::kBosMass;
  const auto witness = [&](const Witness& w, const FoundBy* by) {
    nlohmann::json j = {{"trigger", w.trigger},
                        {"position", w.position},
                        {bos ? "head" : "coordinate", w.coordinate},
                        {"certified", std::isnan(w.certified) ? nlohmann::json(nullptr)
                                                              : nlohmann::json(w.certified)},
                        {"certified_bits", w.certified_bits},
                        {"value_double", w.value},
                        {"double_disagrees", w.double_disagrees}};
    if (bos) j["layer"] = w.layer;
    if (by) j["found_by"] = to_string(*by);
    return j;
  };
  nlohmann::json per = nlohmann::json::array();
  for (std::size_t t = 0; t < r.per_trigger.size(); ++t) {
    per.push_back(witness(r.per_trigger[t], &r.found_by[t]));
  }
  return {{"quantity", bos ? "min non-trigger BOS mass" : "l_inf error"},
          {"evidence", r.evidence.label()},
          {"best", witness(r.best, nullptr)},
          {"per_trigger", per},
          {"rounds", r.rounds},
          {"evaluations", r.evaluations},
          {"screened_moves", r.screened_moves},
          {"seconds", r.seconds}};
}

}  // namespace sinkcert::search
