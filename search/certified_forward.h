// SPDX-License-Identifier: MIT
//
// The forward pass in MPFI (or DoubleInterval) at one input, for certifying a witness
// (adversary.h, certify_witness) in O(L^2 n + L n^2) interval operations per
// layer and head.
//
// It is src/forward.h's forward pass with one change: the softmax kinds
// (softmax, softmax-off-by-one, gated) enclose each row by the same
// exact-range formula as src/attention.h,
//   a_k in [1 / (1 + sum_{t!=k} exp(u_t - l_k)),  1 / (1 + sum_{t!=k} exp(l_t - u_k))]
// (scores s_t in [l_t, u_t]; off-by-one adds the logit 0 to both sums), with
// the sums over t != k taken from prefix and suffix sums instead of a loop
// per k (O(count) exponentials per row instead of 2 count^2):
//   sum_{t!=k} exp(u_t - l_k) = exp(m_u - l_k) (P_k + S_k),
//   P_k = sum_{t<k} exp(u_t - m_u),  S_k = sum_{t>k} exp(u_t - m_u),
//   m_u = max_t u_t  (and likewise with l and u exchanged, m_l = max_t l_t),
// each factor enclosed in outward-rounded interval arithmetic. In exact
// arithmetic the two forms are equal; each enclosure contains the true
// weight, so the pass encloses f(X) as src/forward.h's does (its ends may
// differ in the last bits of the precision). At a certified witness the
// scores are nearly points, the only case it is used for; at L = 256 the
// quadratic loop made one certification cost about 20 s at 128 bits.
// The other attention kinds use attention_row unchanged.
#pragma once

#include "src/forward.h"

namespace sinkcert::search {

// f(X) and (keep_attention) the attention weights, enclosed; X and the
// model's entries in MPFI at the current precision, or in DoubleInterval
// (I is Mpfi or DoubleInterval).
template <class I>
ForwardResult<I> certified_forward(const Model<I>& model, const Matrix<I>& X, bool keep_attention);

// One softmax row enclosed as in the header: a[0..count) from s[0..count)
// (a may alias s).
template <class I>
void softmax_enclosure(const I* s, int count, bool off_by_one, I* a);

}  // namespace sinkcert::search
