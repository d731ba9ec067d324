// SPDX-License-Identifier: MIT
#include "search/certified_forward.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "src/attention.h"
#include "src/forward.h"
#include "src/interval.h"

namespace sinkcert::search {

template <class I>
void softmax_enclosure(const I* s, int count, bool off_by_one, I* a) {
  std::vector<I> lo(count), hi(count);
  for (int t = 0; t < count; ++t) {
    lo[t] = point_of(lower_of(s[t]));
    hi[t] = point_of(upper_of(s[t]));
  }
  // m_u = max_t u_t, m_l = max_t l_t (points; the logit 0 of off-by-one included)
  Endpoint<I> mu = upper_of(s[0]), ml = lower_of(s[0]);
  for (int t = 0; t < count; ++t) {
    if (upper_of(s[t]) > mu) mu = upper_of(s[t]);
    if (lower_of(s[t]) > ml) ml = lower_of(s[t]);
  }
  if (off_by_one) {
    if (mu < 0) mu = 0;
    if (ml < 0) ml = 0;
  }
  const I MU = point_of(mu), ML = point_of(ml);
  // eu_t = exp(u_t - m_u), el_t = exp(l_t - m_l)
  std::vector<I> eu(count), el(count);
  for (int t = 0; t < count; ++t) {
    eu[t] = exp_of(I(hi[t] - MU));
    el[t] = exp_of(I(lo[t] - ML));
  }
  // the off-by-one logit 0 is a term t != k of every sum
  const I zero_u = off_by_one ? I(exp_of(I(-MU))) : I(0);
  const I zero_l = off_by_one ? I(exp_of(I(-ML))) : I(0);
  // suffix sums S_k = sum_{t>k}, then prefix sums P_k = sum_{t<k} on the way
  std::vector<I> su(count + 1), sl(count + 1);
  su[count] = I(0);
  sl[count] = I(0);
  for (int t = count - 1; t >= 0; --t) {
    su[t] = su[t + 1] + eu[t];
    sl[t] = sl[t + 1] + el[t];
  }
  I pu(0), pl(0);
  for (int k = 0; k < count; ++k) {
    // lower end: 1 / (1 + exp(m_u - l_k) (P^u_k + S^u_k [+ exp(-m_u)]))
    const I sum_hi = I(exp_of(I(MU - lo[k]))) * I(pu + su[k + 1] + zero_u);
    // upper end: 1 / (1 + exp(m_l - u_k) (P^l_k + S^l_k [+ exp(-m_l)]))
    const I sum_lo = I(exp_of(I(ML - hi[k]))) * I(pl + sl[k + 1] + zero_l);
    const I low = I(1) / I(I(1) + sum_hi);
    const I high = I(1) / I(I(1) + sum_lo);
    pu += eu[k];
    pl += el[k];
    a[k] = I(lower_of(low), upper_of(high));
  }
}

template <class I>
ForwardResult<I> certified_forward(const Model<I>& model, const Matrix<I>& X, bool keep_attention) {
  const bool softmax_kind = model.attention == AttentionKind::kSoftmax ||
                            model.attention == AttentionKind::kSoftmaxOffByOne ||
                            model.attention == AttentionKind::kGated;
  const bool off_by_one = model.attention == AttentionKind::kSoftmaxOffByOne;
  // src/forward.h's pass, softmax rows enclosed by softmax_enclosure
  return forward_with_rows(model, X, keep_attention, [&](int i, const I* s, I* a) {
    if (softmax_kind) {
      softmax_enclosure(s, i + 1, off_by_one, a);
    } else {
      attention_row(model.attention, i, s, a);
    }
  });
}

template void softmax_enclosure(const Mpfi*, int, bool, Mpfi*);
template void softmax_enclosure(const DoubleInterval*, int, bool, DoubleInterval*);
template ForwardResult<Mpfi> certified_forward(const Model<Mpfi>&, const Matrix<Mpfi>&, bool);
template ForwardResult<DoubleInterval> certified_forward(const Model<DoubleInterval>&,
                                                         const Matrix<DoubleInterval>&, bool);

}  // namespace sinkcert::search
