// SPDX-License-Identifier: MIT
//
// Table Q1 and figure F5 of the appendix: the row-1 frontier's certified
// ends (theorems/studies/row1_frontier.h), per (n, L) and delta:
//   g(delta)   CERTIFIED, every model: eps*_1(delta) >= g (eps0 rounded down)
//   U_cert     CERTIFIED, this model: the upper family's model file with
//              certified row-1 deficit D' >= delta has E <= U_cert (rounded
//              up), so eps*_1(delta) <= U_cert
//   U(delta)   EXACT, the family's infimum (L-2) delta / (1 + (2L-5) delta)
//   U_cert / g an upper end of the ratio (rounded up)
//   model      the model file written beside the table
// The figure plots g and U_cert against delta (log-log).
#pragma once

#include <vector>

#include "src/table_writer.h"
#include "theorems/studies/row1_frontier.h"

namespace sinkcert::theorems::reports {

// The table's sizes and deltas.
std::vector<std::pair<int, int>> q1_sizes();
std::vector<std::string> q1_deltas();

Table q1_table(const std::vector<studies::Row1FrontierRow>& rows);
Figure q1_figure(const std::vector<studies::Row1FrontierRow>& rows);

}  // namespace sinkcert::theorems::reports
