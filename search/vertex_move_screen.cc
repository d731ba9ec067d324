// SPDX-License-Identifier: MIT
#include "search/vertex_move_screen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "src/attention.h"
#include "src/forward.h"
#include "src/linf_error.h"

namespace sinkcert::search {

namespace {

bool is_softmax_kind(AttentionKind kind) {
  return kind == AttentionKind::kSoftmax || kind == AttentionKind::kSoftmaxOffByOne;
}

// a_ik of the elementwise kinds from one score: phi(s) / divisor_i,
// phi = relu or sigmoid (src/attention.h, attention_row)
double elementwise_weight(AttentionKind kind, int i, double s) {
  const double divisor = attention_divisor(kind, i);
  if (kind == AttentionKind::kSigmoid) return 1.0 / (1.0 + std::exp(-s)) / divisor;
  return (s > 0 ? s : 0.0) / divisor;
}

// Row i's weights from its scores s[0..i], as the screen stores them:
// softmax kinds u_k = exp(s_k - m), m = max_k s_k (and 0 for off-by-one,
// whose extra logit is 0), Z = sum_k u_k (+ exp(-m)), so a_ik = u_k / Z;
// the elementwise kinds u_k = a_ik, m = 0, Z = 1.
void row_weights(AttentionKind kind, int i, const double* s, double* u, double& m, double& Z) {
  if (!is_softmax_kind(kind)) {
    for (int k = 0; k <= i; ++k) u[k] = elementwise_weight(kind, i, s[k]);
    m = 0;
    Z = 1;
    return;
  }
  const bool off_by_one = kind == AttentionKind::kSoftmaxOffByOne;
  m = off_by_one ? 0.0 : s[0];
  for (int k = 0; k <= i; ++k) m = std::max(m, s[k]);
  // Z = sum_k exp(s_k - m) [+ exp(-m)]
  Z = off_by_one ? std::exp(-m) : 0.0;
  for (int k = 0; k <= i; ++k) {
    u[k] = std::exp(s[k] - m);
    Z += u[k];
  }
}

}  // namespace

bool VertexMoveScreen::applies(const Model<double>& model) {
  return applies(model.kind, model.attention, model.num_layers());
}

bool VertexMoveScreen::applies(ModelKind kind, AttentionKind attention, int layers) {
  if (kind != ModelKind::kSingleLayer || layers != 1) return false;
  switch (attention) {
    case AttentionKind::kSoftmax:
    case AttentionKind::kSoftmaxOffByOne:
    case AttentionKind::kRelu:
    case AttentionKind::kReluCountAll:
    case AttentionKind::kSigmoid:
      return true;
    case AttentionKind::kSoftpick:
    case AttentionKind::kGated:
      return false;
  }
  return false;
}

VertexMoveScreen::VertexMoveScreen(const Model<double>& model, const Task& task, int trigger,
                                   WitnessQuantity quantity)
    : model_(model),
      task_(task),
      trigger_(trigger),
      bos_(quantity == WitnessQuantity::kBosMass),
      softmax_(is_softmax_kind(model.attention)) {
  if (!applies(model)) throw std::invalid_argument("the move screen needs a single-layer model");
  const int L = task.L, n = task.n;
  // S_A = max_h sum_{t,u} |A_h[t,u]| and out_scale (header)
  double s_a = 0, m_sum = 0;
  for (const Head<double>& h : model.layers[0]) {
    s_a = std::max(s_a, h.A.cwiseAbs().sum());
    m_sum += h.M.cwiseAbs().rowwise().sum().maxCoeff();
  }
  const double w = softmax_ ? 1.0 : 2.0 * std::max(1.0, s_a);
  const double out_scale = bos_ ? 1.0 : 1.0 + m_sum * w;
  // tol = kScreenSlack eps (L + n + n S_A) out_scale
  tolerance_ =
      kScreenSlack * std::numeric_limits<double>::epsilon() * (L + n + n * s_a) * out_scale;
  heads_.resize(model.layers[0].size());
  out_.resize(n, L);
  bos_rows_.resize(L);
  s_row_.resize(L);
  a_row_.resize(L);
  estimated_.assign(L, std::nan(""));
}

Witness VertexMoveScreen::score(const Matrix<double>& C) {
  // exactly score_error / score_bos_mass (adversary.cc)
  pending_C_ = C;
  pending_X_ = make_input<double>(task_, trigger_, C);
  auto r = forward(model_, pending_X_, bos_);
  pending_out_ = std::move(r.output);
  if (!bos_) {
    pending_Y_ = make_target(pending_X_, trigger_, target_kind_of(model_.kind));
    const auto e = linf_error<double>(pending_out_, pending_Y_);
    return Witness{trigger_, C, e.value, e.position, e.coordinate, 0};
  }
  pending_attention_ = std::move(r.attention[0]);
  Witness w{trigger_, C, 2.0, 0, 0, 0};
  for (int h = 0; h < model_.num_heads(); ++h) {
    for (int i = 1; i < task_.L; ++i) {
      if (i == trigger_) continue;
      const double b = pending_attention_[h](i, 0);
      if (b < w.value) {
        w.value = b;
        w.position = i;
        w.coordinate = h;
        w.layer = 0;
      }
    }
  }
  return w;
}

Witness VertexMoveScreen::reset(const Matrix<double>& C) {
  Witness w = score(C);
  accept();
  return w;
}

void VertexMoveScreen::accept() {
  C_ = pending_C_;
  X_ = pending_X_;
  const int L = task_.L, n = task_.n;
  // the fresh row values: max_d |f_{i,d} - y_{i,d}| (the terms linf_error
  // takes the max of), or min_h a^h_i0 over non-trigger rows i >= 1
  rows_.assign(L, std::nan(""));
  if (!bos_) {
    Y_ = pending_Y_;
    for (int i = 0; i < L; ++i) {
      double v = 0;
      for (int d = 0; d < n; ++d) v = std::max(v, std::abs(pending_out_(i, d) - Y_(i, d)));
      rows_[i] = v;
    }
  } else {
    for (int i = 1; i < L; ++i) {
      if (i == trigger_) continue;
      double v = std::numeric_limits<double>::infinity();
      for (const Matrix<double>& a : pending_attention_) v = std::min(v, a(i, 0));
      rows_[i] = v;
    }
  }
  exact_ = true;
  applied_ = 0;
  update_current();
  rebuild();
}

void VertexMoveScreen::update_norms(HeadState& st) {
  // Pn_m = |p_m|_inf, Pmax_i = max_{m <= i} Pn_m
  const int L = task_.L;
  st.Pn.resize(L);
  st.Pmax.resize(L);
  for (int m = 0; m < L; ++m) {
    st.Pn(m) = st.P.col(m).cwiseAbs().maxCoeff();
    st.Pmax(m) = m == 0 ? st.Pn(m) : std::max(st.Pmax(m - 1), st.Pn(m));
  }
}

void VertexMoveScreen::update_current() {
  // max of the row errors (error; NaN rows skipped, none after a fresh
  // pass of finite values) or min of the BOS masses
  current_ = bos_ ? std::numeric_limits<double>::infinity() : 0.0;
  for (double v : rows_) {
    if (std::isnan(v)) continue;
    current_ = bos_ ? std::min(current_, v) : std::max(current_, v);
  }
}

void VertexMoveScreen::rebuild() {
  const int L = task_.L;
  const Matrix<double> Xt = X_.transpose();
  for (std::size_t h = 0; h < heads_.size(); ++h) {
    const Head<double>& hd = model_.layers[0][h];
    HeadState& st = heads_[h];
    // stored transposed (column i = row i) so that rows are contiguous:
    // XA^T col i = A^T x_i, AX^T col m = A x_m, P^T col m = M x_m
    st.XA.noalias() = hd.A.transpose() * Xt;
    st.AXt.noalias() = hd.A * Xt;
    st.P.noalias() = hd.M * Xt;
    // S^T(k, i) = x_k . (A^T x_i) = s_ik
    st.S.noalias() = X_ * st.XA;
    st.U.setZero(L, L);
    st.Z.resize(L);
    st.mx.resize(L);
    for (int i = 0; i < L; ++i) {
      const double* s = &st.S(0, i);
      double* u = &st.U(0, i);
      row_weights(model_.attention, i, s, u, st.mx(i), st.Z(i));
    }
    // R^T col i = sum_m U_im p_m
    st.R.noalias() = st.P * st.U;
    update_norms(st);
  }
}

double VertexMoveScreen::estimate(int first, int last, int col_begin, int col_end, bool* sure,
                                  double cutoff) {
  const int L = task_.L, n = task_.n, j = trigger_;
  if (first < 1 || last < first || last >= L || col_begin < 0 || col_end <= col_begin ||
      col_end > task_.content_dim()) {
    throw std::invalid_argument("screened move outside the content");
  }
  *sure = true;
  // K = positions first..last, T = coordinates t = kFirstContent + c,
  // delta_{m,t} = -2 C(m-1, c)
  const int nk = last - first + 1, nt = col_end - col_begin;
  const int heads = static_cast<int>(heads_.size());
  t_idx_.resize(nt);
  delta_.resize(nt, nk);
  for (int q = 0; q < nt; ++q) t_idx_[q] = kFirstContent + col_begin + q;
  for (int m = first; m <= last; ++m)
    for (int q = 0; q < nt; ++q) delta_(q, m - first) = -2.0 * C_(m - 1, col_begin + q);
  const auto in_k = [&](int m) { return m >= first && m <= last; };
  // dp_m = M delta_m (m in K): p'_m = p_m + dp_m; dpn_m = |dp_m|_inf
  dps_.resize(heads);
  dpn_.resize(nk, heads);
  for (int h = 0; h < heads; ++h) {
    const Head<double>& hd = model_.layers[0][h];
    dps_[h].setZero(n, nk);
    for (int mk = 0; mk < nk; ++mk) {
      for (int q = 0; q < nt; ++q) dps_[h].col(mk) += delta_(q, mk) * hd.M.col(t_idx_[q]);
      dpn_(mk, h) = dps_[h].col(mk).cwiseAbs().maxCoeff();
    }
  }
  // (x_i^T A) . delta_m: the change of s_im for m in K
  const auto query_shift = [&](const HeadState& st, int i, int mk) {
    double v = 0;
    for (int q = 0; q < nt; ++q) v += st.XA(t_idx_[q], i) * delta_(q, mk);
    return v;
  };
  // s'_im for every m <= i of a row i in K, into s_row_
  const auto full_scores = [&](const Head<double>& hd, const HeadState& st, int i) {
    for (int m = 0; m <= i; ++m) {
      double s = st.S(m, i);
      if (in_k(m)) s += query_shift(st, i, m - first);
      for (int q = 0; q < nt; ++q) s += delta_(q, i - first) * st.AXt(t_idx_[q], m);
      if (in_k(m)) {
        for (int q = 0; q < nt; ++q)
          for (int r = 0; r < nt; ++r)
            s += delta_(q, i - first) * hd.A(t_idx_[q], t_idx_[r]) * delta_(r, m - first);
      }
      s_row_[m] = s;
    }
  };
  // Bound on |o'_i - o_i|_inf for one head (error rows that may be skipped):
  //   o'_i - o_i = sum_m (a'_im - a_im) p_m + sum_{m in K} a'_im dp_m,
  //   |.| <= sum_m |a'_im - a_im| |p_m| + sum_K a'_im |dp_m|;
  // rows after K (softmax): the weights outside K all scale by one factor,
  //   sum_{m not in K} |a'_im - a_im| = |(Z_i - sum_K u_im) g / Z' - (Z_i - sum_K u_im) / Z_i|,
  //   bounded with max_{m <= i} |p_m|.
  const auto change_bound = [&](int h, int i) {
    const Head<double>& hd = model_.layers[0][h];
    const HeadState& st = heads_[h];
    double bound = 0;
    if (i > last) {
      if (softmax_) {
        const double mx = st.mx(i);
        double top = mx, removed = 0;
        for (int m = first; m <= last; ++m) {
          s_row_[m] = st.S(m, i) + query_shift(st, i, m - first);
          top = std::max(top, s_row_[m]);
          removed += st.U(m, i);
        }
        const double g = std::exp(mx - top);
        double added = 0;
        for (int m = first; m <= last; ++m) {
          a_row_[m] = std::exp(s_row_[m] - top);
          added += a_row_[m];
        }
        const double Z = st.Z(i), Zn = (Z - removed) * g + added;
        bound += std::abs((Z - removed) * g / Zn - (Z - removed) / Z) * st.Pmax(i);
        for (int m = first; m <= last; ++m) {
          const double a_new = a_row_[m] / Zn, a_old = st.U(m, i) / Z;
          bound += std::abs(a_new - a_old) * st.Pn(m) + a_new * dpn_(m - first, h);
        }
      } else {
        for (int m = first; m <= last; ++m) {
          const double a_new =
              elementwise_weight(model_.attention, i, st.S(m, i) + query_shift(st, i, m - first));
          bound += std::abs(a_new - st.U(m, i)) * st.Pn(m) + a_new * dpn_(m - first, h);
        }
      }
      return bound;
    }
    // a row in K: every weight may change
    full_scores(hd, st, i);
    attention_row(model_.attention, i, s_row_.data(), a_row_.data());
    const double Z = st.Z(i);
    for (int m = 0; m <= i; ++m) {
      bound += std::abs(a_row_[m] - st.U(m, i) / Z) * st.Pn(m);
      if (in_k(m)) bound += a_row_[m] * dpn_(m - first, h);
    }
    return bound;
  };
  // one head's o'_i (added to out_.col(i)) and a'_i0 (into bos_rows_[i])
  const auto exact_row = [&](int h, int i) {
    const Head<double>& hd = model_.layers[0][h];
    const HeadState& st = heads_[h];
    const Matrix<double>& dp = dps_[h];
    auto oi = out_.col(i);
    // rows after K: only the terms m in K of the attention sum change,
    // updated in O(|K| n) when that is cheaper than the row and does not
    // cancel (sum_{m in K} u_im <= Z_i / 2)
    if (i > last && 2 * nk < i + 1) {
      double removed = 0;
      for (int m = first; m <= last; ++m) removed += st.U(m, i);
      if (!softmax_) {
        // o'_i = R_i + sum_{m in K} (a'_im p'_m - a_im p_m)
        bos_rows_[i] = std::min(bos_rows_[i], st.U(0, i));
        if (bos_) return;
        oi += st.R.col(i);
        for (int m = first; m <= last; ++m) {
          const double a =
              elementwise_weight(model_.attention, i, st.S(m, i) + query_shift(st, i, m - first));
          oi += a * (st.P.col(m) + dp.col(m - first)) - st.U(m, i) * st.P.col(m);
        }
        return;
      }
      if (removed <= 0.5 * st.Z(i)) {
        // m' = max(m_i, max_{m in K} s'_im), g = exp(m_i - m'), u'_m = exp(s'_im - m')
        const double mx = st.mx(i);
        double top = mx;
        for (int m = first; m <= last; ++m) {
          s_row_[m] = st.S(m, i) + query_shift(st, i, m - first);
          top = std::max(top, s_row_[m]);
        }
        const double g = std::exp(mx - top);
        // Z' = (Z_i - sum_K u_im) g + sum_K u'_m,
        // o'_i = ((R_i - sum_K u_im p_m) g + sum_K u'_m p'_m) / Z'
        double added = 0;
        for (int m = first; m <= last; ++m) {
          a_row_[m] = std::exp(s_row_[m] - top);
          added += a_row_[m];
        }
        const double Zn = (st.Z(i) - removed) * g + added;
        bos_rows_[i] = std::min(bos_rows_[i], st.U(0, i) * g / Zn);
        if (bos_) return;
        vec_ = st.R.col(i);
        for (int m = first; m <= last; ++m) vec_ -= st.U(m, i) * st.P.col(m);
        vec_ *= g;
        for (int m = first; m <= last; ++m) vec_ += a_row_[m] * (st.P.col(m) + dp.col(m - first));
        oi += vec_ / Zn;
        return;
      }
    }
    // the whole row: s'_im = s_im + [m in K] (x_i^T A) . delta_m
    //   + [i in K] delta_i . (A x_m) + [i, m in K] delta_i^T A delta_m
    if (in_k(i)) {
      full_scores(hd, st, i);
    } else {
      for (int m = 0; m <= i; ++m)
        s_row_[m] = st.S(m, i) + (in_k(m) ? query_shift(st, i, m - first) : 0.0);
    }
    attention_row(model_.attention, i, s_row_.data(), a_row_.data());
    bos_rows_[i] = std::min(bos_rows_[i], a_row_[0]);
    if (bos_) return;
    // o'_i = sum_{m<=i} a'_im p'_m
    for (int m = 0; m <= i; ++m) {
      oi += a_row_[m] * st.P.col(m);
      if (in_k(m)) oi += a_row_[m] * dp.col(m - first);
    }
  };
  // the rows' values; the target changes at the trigger row when K meets
  // 1..j: y'_j = y_j + (1/j) sum_{m in K, m <= j} delta_m
  double best = bos_ ? std::numeric_limits<double>::infinity() : 0.0;
  std::fill(estimated_.begin(), estimated_.end(), std::nan(""));
  for (int i = first; i < L; ++i) {
    if (bos_ && i == j) continue;
    // an error row that provably stays below the cutoff is not computed:
    // its fresh value is at most rows_[i] + tol / 2 + the change bound
    if (!bos_ && i != j && !std::isnan(cutoff)) {
      double bound = 0;
      for (int h = 0; h < heads; ++h) bound += change_bound(h, i);
      if (rows_[i] + bound * kBoundRounding + 2 * tolerance_ < cutoff) continue;
    }
    out_.col(i).setZero();
    bos_rows_[i] = std::numeric_limits<double>::infinity();
    for (int h = 0; h < heads; ++h) exact_row(h, i);
    double v;
    if (bos_) {
      v = bos_rows_[i];
    } else {
      v = 0;
      for (int d = 0; d < n; ++d) {
        double y = Y_(i, d);
        if (i == j && d >= t_idx_[0] && d <= t_idx_[nt - 1]) {
          for (int m = first; m <= std::min(last, j); ++m)
            y += delta_(d - t_idx_[0], m - first) / j;
        }
        // std::max drops a NaN operand on the right: checked below
        v = std::max(v, std::abs(out_(d, i) - y));
        if (!std::isfinite(out_(d, i))) *sure = false;
      }
    }
    if (!std::isfinite(v)) *sure = false;
    estimated_[i] = v;
    best = bos_ ? std::min(best, v) : std::max(best, v);
  }
  return best;
}

VertexMoveScreen::Verdict VertexMoveScreen::judge(int first, int last, int col_begin, int col_end) {
  bool sure = true;
  const double margin = 2 * tolerance_;
  // error rows that cannot reach current - margin are not computed
  const double v =
      estimate(first, last, col_begin, col_end, &sure, bos_ ? std::nan("") : current_ - margin);
  if (!sure) return Verdict::kUndecided;
  // the fresh rows i >= first and the current value each lie within tol of
  // their estimates (header); rows i < first are the current vertex's
  const double gain = bos_ ? current_ - v : v - current_;
  if (gain < -margin) return Verdict::kWorse;
  if (gain > margin) return Verdict::kBetter;
  return Verdict::kUndecided;
}

void VertexMoveScreen::apply(int first, int last, int col_begin, int col_end) {
  const int L = task_.L, n = task_.n, j = trigger_;
  // the rows' values: the estimate of this move (estimate() fills
  // estimated_ and the block's delta_)
  bool sure = true;
  estimate(first, last, col_begin, col_end, &sure);
  const int nt = col_end - col_begin;
  const auto in_k = [&](int m) { return m >= first && m <= last; };
  for (std::size_t h = 0; h < heads_.size(); ++h) {
    const Head<double>& hd = model_.layers[0][h];
    HeadState& st = heads_[h];
    const Matrix<double>& dp_ = dps_[h];
    const auto query_shift = [&](int i, int mk) {
      double v = 0;
      for (int q = 0; q < nt; ++q) v += st.XA(t_idx_[q], i) * delta_(q, mk);
      return v;
    };
    for (int i = first; i < L; ++i) {
      double* s = &st.S(0, i);
      double* u = &st.U(0, i);
      if (i > last) {
        // only the entries m in K of row i change
        if (!softmax_) {
          // R'_i = R_i + sum_K (a'_im p'_m - a_im p_m)
          for (int m = first; m <= last; ++m) {
            s[m] += query_shift(i, m - first);
            const double a = elementwise_weight(model_.attention, i, s[m]);
            st.R.col(i) += a * (st.P.col(m) + dp_.col(m - first)) - u[m] * st.P.col(m);
            u[m] = a;
          }
          continue;
        }
        double removed = 0;
        for (int m = first; m <= last; ++m) removed += u[m];
        if (removed <= 0.5 * st.Z(i)) {
          // m' = max(m_i, max_K s'_im), g = exp(m_i - m'): every u_im scaled by g
          const double mx = st.mx(i);
          double top = mx;
          for (int m = first; m <= last; ++m) {
            s[m] += query_shift(i, m - first);
            top = std::max(top, s[m]);
          }
          const double g = std::exp(mx - top);
          vec_ = st.R.col(i);
          for (int m = first; m <= last; ++m) vec_ -= u[m] * st.P.col(m);
          vec_ *= g;
          double added = 0;
          if (g != 1.0) {
            for (int m = 0; m <= i; ++m) u[m] *= g;
          }
          for (int m = first; m <= last; ++m) {
            u[m] = std::exp(s[m] - top);
            added += u[m];
            vec_ += u[m] * (st.P.col(m) + dp_.col(m - first));
          }
          st.R.col(i) = vec_;
          st.Z(i) = (st.Z(i) - removed) * g + added;
          st.mx(i) = top;
          continue;
        }
      }
      // the whole row from its new scores (as rebuild())
      for (int m = 0; m <= i; ++m) {
        double v = s[m];
        if (in_k(m)) v += query_shift(i, m - first);
        if (in_k(i)) {
          for (int q = 0; q < nt; ++q) v += delta_(q, i - first) * st.AXt(t_idx_[q], m);
          if (in_k(m)) {
            for (int q = 0; q < nt; ++q)
              for (int r = 0; r < nt; ++r)
                v += delta_(q, i - first) * hd.A(t_idx_[q], t_idx_[r]) * delta_(r, m - first);
          }
        }
        s_row_[m] = v;
      }
      for (int m = 0; m <= i; ++m) s[m] = s_row_[m];
      row_weights(model_.attention, i, s, u, st.mx(i), st.Z(i));
      vec_.setZero(n);
      for (int m = 0; m <= i; ++m) {
        vec_ += u[m] * st.P.col(m);
        if (in_k(m)) vec_ += u[m] * dp_.col(m - first);
      }
      st.R.col(i) = vec_;
    }
    // the changed tokens: A^T x'_m, A x'_m, M x'_m
    for (int m = first; m <= last; ++m) {
      for (int q = 0; q < nt; ++q) {
        const double dq = delta_(q, m - first);
        st.XA.col(m) += dq * hd.A.row(t_idx_[q]).transpose();
        st.AXt.col(m) += dq * hd.A.col(t_idx_[q]);
      }
      st.P.col(m) += dp_.col(m - first);
    }
    update_norms(st);
  }
  // the vertex, its target (y'_j = y_j + (1/j) sum_{m in K, m <= j} delta_m)
  // and its rows
  for (int m = first; m <= last; ++m) {
    for (int q = 0; q < nt; ++q) {
      const int t = t_idx_[q];
      C_(m - 1, col_begin + q) = -C_(m - 1, col_begin + q);
      X_(m, t) = C_(m - 1, col_begin + q);
      if (!bos_ && m <= j) Y_(j, t) += delta_(q, m - first) / j;
    }
  }
  for (int i = first; i < L; ++i) rows_[i] = estimated_[i];
  exact_ = false;
  ++applied_;
  update_current();
}

}  // namespace sinkcert::search
