// SPDX-License-Identifier: MIT
#include "search/certified_forward.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "src/attention.h"
#include "src/forward.h"

namespace sinkcert::search {

void softmax_enclosure(const Mpfi* s, int count, bool off_by_one, Mpfi* a) {
  std::vector<Mpfi> lo(count), hi(count);
  for (int t = 0; t < count; ++t) {
    lo[t] = Mpfi(bmp::lower(s[t]));
    hi[t] = Mpfi(bmp::upper(s[t]));
  }
  // m_u = max_t u_t, m_l = max_t l_t (points; the logit 0 of off-by-one included)
  Mpfr mu = bmp::upper(s[0]), ml = bmp::lower(s[0]);
  for (int t = 0; t < count; ++t) {
    if (bmp::upper(s[t]) > mu) mu = bmp::upper(s[t]);
    if (bmp::lower(s[t]) > ml) ml = bmp::lower(s[t]);
  }
  if (off_by_one) {
    if (mu < 0) mu = 0;
    if (ml < 0) ml = 0;
  }
  const Mpfi MU(mu), ML(ml);
  // eu_t = exp(u_t - m_u), el_t = exp(l_t - m_l)
  std::vector<Mpfi> eu(count), el(count);
  for (int t = 0; t < count; ++t) {
    eu[t] = exp(Mpfi(hi[t] - MU));
    el[t] = exp(Mpfi(lo[t] - ML));
  }
  // the off-by-one logit 0 is a term t != k of every sum
  const Mpfi zero_u = off_by_one ? Mpfi(exp(Mpfi(-MU))) : Mpfi(0);
  const Mpfi zero_l = off_by_one ? Mpfi(exp(Mpfi(-ML))) : Mpfi(0);
  // suffix sums S_k = sum_{t>k}, then prefix sums P_k = sum_{t<k} on the way
  std::vector<Mpfi> su(count + 1), sl(count + 1);
  su[count] = Mpfi(0);
  sl[count] = Mpfi(0);
  for (int t = count - 1; t >= 0; --t) {
    su[t] = su[t + 1] + eu[t];
    sl[t] = sl[t + 1] + el[t];
  }
  Mpfi pu(0), pl(0);
  for (int k = 0; k < count; ++k) {
    // lower end: 1 / (1 + exp(m_u - l_k) (P^u_k + S^u_k [+ exp(-m_u)]))
    const Mpfi sum_hi = Mpfi(exp(Mpfi(MU - lo[k]))) * Mpfi(pu + su[k + 1] + zero_u);
    // upper end: 1 / (1 + exp(m_l - u_k) (P^l_k + S^l_k [+ exp(-m_l)]))
    const Mpfi sum_lo = Mpfi(exp(Mpfi(ML - hi[k]))) * Mpfi(pl + sl[k + 1] + zero_l);
    const Mpfi low = Mpfi(1) / Mpfi(Mpfi(1) + sum_hi);
    const Mpfi high = Mpfi(1) / Mpfi(Mpfi(1) + sum_lo);
    pu += eu[k];
    pl += el[k];
    a[k] = Mpfi(bmp::lower(low), bmp::upper(high));
  }
}

ForwardResult<Mpfi> certified_forward(const Model<Mpfi>& model, const Matrix<Mpfi>& X,
                                      bool keep_attention) {
  const bool softmax_kind = model.attention == AttentionKind::kSoftmax ||
                            model.attention == AttentionKind::kSoftmaxOffByOne ||
                            model.attention == AttentionKind::kGated;
  const bool off_by_one = model.attention == AttentionKind::kSoftmaxOffByOne;
  // src/forward.h's pass, softmax rows enclosed by softmax_enclosure
  return forward_with_rows(model, X, keep_attention, [&](int i, const Mpfi* s, Mpfi* a) {
    if (softmax_kind) {
      softmax_enclosure(s, i + 1, off_by_one, a);
    } else {
      attention_row(model.attention, i, s, a);
    }
  });
}

}  // namespace sinkcert::search
