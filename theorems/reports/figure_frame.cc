// SPDX-License-Identifier: MIT
#include "theorems/reports/figure_frame.h"

#include <stdexcept>

namespace sinkcert::theorems::reports {

namespace {

// `text` with its first kStudyMark replaced by `study`.
std::string with_study(std::string text, const std::string& study) {
  const std::string mark = kStudyMark;
  const auto at = text.find(mark);
  if (at != std::string::npos) text.replace(at, mark.size(), study);
  return text;
}

}  // namespace

Figure figure_frame(const std::string& name, const std::string& what, const std::string& study,
                    const std::vector<FigureText>& texts) {
  for (const FigureText& t : texts) {
    if (t.name != name) continue;
    Figure f;
    f.name = name;
    f.png = true;
    f.caption = with_study(t.caption, study);
    if (!t.caption_latex.empty()) {
      f.caption_latex = with_study(t.caption_latex, latex_escape(study));
    }
    f.evidence = t.evidence;
    return f;
  }
  throw std::invalid_argument("no " + what + " figure called \"" + name + "\"");
}

}  // namespace sinkcert::theorems::reports
