// SPDX-License-Identifier: MIT
//
// The forward pass of a residual softmax model over a content box in
// symbolic first-order forms (symbolic_form.h), one noise symbol per content
// variable of the box,
//
//   x_{k, 2+c} = centre_m + h_m eps_m   (m = content_variable(k, c), h_m the half-width),
//
// the flags exact constants; per layer and head, at query row i:
//   q_e  = sum_p A_pe x_ip                  (exact in the symbols)
//   s_k  = sum_e q_e x_ke                   (products: the query and the key both vary)
//   a_k  = 1 / (1 + sum_{m != k} exp(s_m - s_k))   (softmax; differences first,
//          so that what all scores of the row share cancels in s_m - s_k;
//          the denominator is >= 1, which clips its range)
//          off-by-one softmax: the denominator also has exp(-s_k)
//   V_e  = sum_k a_k x_ke,   o_d = sum_e M_de V_e
//   x   += sum_h o  (residual),   phi += sum_h o,
// phi starting from the mean term -[i = j] (1/j) sum_{k=1..j} x_k (the
// residual's x_i is left out of both sides, so it cannot fail to cancel).
// Each layer's output delta but the last has its remainder turned into a
// fresh symbol before it enters both the stream and phi (symbolic_form.h):
// a later layer that cancels it (o^(l+1) = -o^(l) + ..., as the path
// models' layer 1 does to layer 0's output) cancels the remainder too.
// Symbols: V = (L-1)(n-3) content ones, then (layers - 1) L n fresh ones.
// Every form encloses the quantity it names for every content in the box,
// so the range of phi_{i,d}'s form encloses phi_{i,d} over the box:
//   sup sigma phi_{i,d} <= sigma c + norm + r.
// Cost: O(layers heads L^2 n V) double operations (V = (L-1)(n-3)
// symbols), about a second at n = L = 16 with 2 x 2 heads, against the
// O(L n) reverse passes of the centred forms.
#pragma once

#include <functional>
#include <vector>

#include "src/model.h"
#include "src/task.h"
#include "theorems/bounds/symbolic_form.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems {

// Whether deep_symbolic_error handles the model's attention kind.
bool symbolic_pass_supported(AttentionKind kind);

// phi_{i,d} over the box as forms (L x n, row-major); empty when
// stop() (checked per head row) says the deadline passed. drop_product_remainder:
// see SymbolicArithmetic (tests only).
std::vector<SymbolicForm> deep_symbolic_error(const Model<Mpfi>& model, const Task& task,
                                              const ContentBox& box,
                                              const std::function<bool(int, int)>& stop,
                                              bool drop_product_remainder = false);

}  // namespace sinkcert::theorems
