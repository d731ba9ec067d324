// SPDX-License-Identifier: MIT
//
// A study's figures without their data: each figure of a study is a name, a
// caption and the evidence level of what it plots. The Theorem 1 and
// Theorem 2 reports (and the appendix, which captions the committed
// studies' figures) start every figure from its frame.
#pragma once

#include <string>
#include <vector>

#include "src/table_writer.h"

namespace sinkcert::theorems::reports {

// One figure of a study: its caption (plain text) and, where it holds
// mathematics, the caption's LaTeX form, with the place of the study's
// description marked by kStudyMark in both; the evidence level.
struct FigureText {
  std::string name;
  std::string caption;
  std::string caption_latex;  // empty: the plain caption, escaped
  std::string evidence;
};

// gnuplot line colours of the study figures (`linecolor k` is the k-th):
// the Okabe-Ito palette, told apart in print and by colour-blind readers.
inline constexpr const char* kLineColours =
    "set linetype 1 linecolor rgb '#0072B2' linewidth 1.5\n"
    "set linetype 2 linecolor rgb '#D55E00' linewidth 1.5\n"
    "set linetype 3 linecolor rgb '#009E73' linewidth 1.5\n"
    "set linetype 4 linecolor rgb '#CC79A7' linewidth 1.5\n"
    "set linetype 5 linecolor rgb '#E69F00' linewidth 1.5\n"
    "set linetype 6 linecolor rgb '#56B4E9' linewidth 1.5\n"
    "set linetype 7 linecolor rgb '#000000' linewidth 1.5\n"
    "set linetype cycle 7\n";

// Where a FigureText's caption names its study ("Descent path" + mark + ": ...").
inline constexpr const char* kStudyMark = "{study}";

// The figure `name` of `texts`, as a frame: name, PNG rendered, caption and
// LaTeX caption with kStudyMark replaced by `study` (plain text; escaped
// in the LaTeX form), evidence. Throws std::invalid_argument naming `what`
// ("Theorem 1") when no text has that name.
Figure figure_frame(const std::string& name, const std::string& what, const std::string& study,
                    const std::vector<FigureText>& texts);

}  // namespace sinkcert::theorems::reports
