// SPDX-License-Identifier: MIT
#include "theorems/bounds/box_search.h"

#include <stdexcept>

#include "src/json_reader.h"

namespace sinkcert::theorems::bounds {

bool any_rank(const search::RankGroup& group, bool flag, const std::string& what) {
  if (group.size() == 1) return flag;
  std::vector<std::vector<double>> parts(static_cast<std::size_t>(group.size()));
  PartWriter(parts[static_cast<std::size_t>(group.rank())]).put_int(flag ? 1 : 0);
  group.share(parts);
  bool any = false;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    try {
      PartReader r(parts[k]);
      const long v = r.get_int();
      if ((v != 0 && v != 1) || !r.at_end()) throw std::runtime_error("not a flag");
      any = any || v == 1;
    } catch (const std::exception& e) {
      throw std::runtime_error(what + ": rank " + std::to_string(k) +
                               "'s deadline flag: " + e.what());
    }
  }
  return any;
}

std::string enclosure_progress(const std::string& name, long boxes, const Mpfr& lower,
                               const Mpfr& upper, const Deadline& deadline) {
  const double lo = lower.convert_to<double>(), hi = upper.convert_to<double>();
  std::string s = std::to_string(boxes) + " boxes, " + name + " in [" + progress_number(lo) + ", " +
                  progress_number(hi) + "] [CERTIFIED]";
  // relative gap (upper - lower) / lower
  if (lo > 0) s += ", relative gap " + progress_number((hi - lo) / lo);
  if (deadline.is_set())
    s += ", " + progress_number(deadline.remaining()) + " s of the budget left";
  return s;
}

std::string stop_status(const BoxSearchOutcome& b, bool upper_finite) {
  if (b.verdict == Verdict::kEnclosed) return "gap reached";
  if (b.precision_floor) return "precision floor at " + std::to_string(b.bits) + " bits";
  if (!upper_finite) return "no finite bound";
  if (b.budget_exhausted) return "budget exhausted";
  return b.stop_reason;
}

void precision_lines(std::ostringstream& s, const BoxSearchOutcome& b) {
  const int allocated = bits_for_digits10(digits10_for_bits(b.bits_requested));
  if (b.bits > allocated) {
    s << "precision raised from " << b.bits_requested << " to " << b.bits
      << " bits (rounding, not the box, limited the bound)\n";
  } else if (b.bits != b.bits_requested) {
    s << "precision: " << b.bits << " bits allocated for the " << b.bits_requested
      << " requested (MPFR precision is set in decimal digits)\n";
  }
}

void put_certified_end(nlohmann::json& j, const std::string& name, const Mpfr& x) {
  if (bmp::isinf(x) || bmp::isnan(x)) {
    j[name] = nullptr;
    j[name + "_exact"] = bmp::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
    return;
  }
  j[name] = x.convert_to<double>();
  j[name + "_exact"] = internal::exact_decimal(scalar_cast<Rational>(x));  // exact: dyadic
}

nlohmann::json outcome_json(const BoxSearchOutcome& b) {
  return {{"evidence", b.evidence.label()},
          {"boxes", b.boxes},
          {"seconds", b.seconds},
          {"stop_reason", b.stop_reason},
          {"bits", b.bits},
          {"bits_requested", b.bits_requested},
          {"budget_exhausted", b.budget_exhausted},
          {"precision_floor", b.precision_floor},
          {"box_unsplittable", b.box_unsplittable}};
}

namespace {

void precision_and_evidence(std::ostringstream& s, const BoxSearchOutcome& b) {
  s << "  precision: " << b.bits << " bits  evidence: " << b.evidence.label() << "\n";
}

}  // namespace

void gap_verdict_line(std::ostringstream& s, const BoxSearchOutcome& b, double requested_gap,
                      double achieved_gap, const std::string& enclosure) {
  // without a claim: ENCLOSED or NOT ENCLOSED, never a claim's word
  const Verdict v = b.verdict == Verdict::kEnclosed ? Verdict::kEnclosed : Verdict::kNotEnclosed;
  s << "verdict: " << to_string(v) << " " << enclosure << "  margin (requested gap "
    << requested_gap << " - achieved) = ";
  if (v == Verdict::kEnclosed) {
    s << requested_gap - achieved_gap;
  } else {
    s << "n/a";
  }
  precision_and_evidence(s, b);
}

void claim_verdict_line(std::ostringstream& s, Verdict verdict, double margin,
                        const ClaimMarginTexts& texts, const BoxSearchOutcome& b) {
  s << "verdict: " << to_string(verdict) << "  margin ";
  switch (verdict) {
    case Verdict::kVerified:
      s << texts.verified << " = " << margin;
      break;
    case Verdict::kNotVerified:
      s << texts.not_verified << " = " << margin;
      break;
    case Verdict::kUndecided:
      s << texts.undecided;
      break;
    case Verdict::kEnclosed:
    case Verdict::kNotEnclosed:
    case Verdict::kNotApplicable:
      throw std::logic_error("a claim's verdict is VERIFIED, NOT VERIFIED or UNDECIDED");
  }
  precision_and_evidence(s, b);
}

}  // namespace sinkcert::theorems::bounds
