// SPDX-License-Identifier: MIT
#include "theorems/bounds/bos_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "search/rank_group.h"
#include "src/attention.h"
#include "src/exact_parts.h"
#include "src/interval.h"
#include "src/json_reader.h"
#include "src/table_writer.h"
#include "theorems/bounds/bos_box_search.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds {

namespace {

// [x]^2 with the exact range of the square ([-1, 1]^2 = [0, 1]).
Mpfi square_of(const Mpfi& x) {
  Mpfi r;
  mpfi_sqr(r.backend().data(), x.backend().data());
  return r;
}

// 1 - a_i0 = 1 / (1 + 1 / T) for the softmax kinds (T > 0 used once).
Mpfi deficit_from_odds(const Mpfi& T) { return Mpfi(1) / (Mpfi(1) + Mpfi(1) / T); }

// 1 - a_i0 for the elementwise kinds: a_i0 = phi(s_i0) / divisor depends on
// s_i0 alone (attention_row's a_0 reads s[0] only).
Mpfi elementwise_deficit(AttentionKind kind, int i, const Mpfi& s_i0) {
  std::vector<Mpfi> s(i + 1, Mpfi(0)), a(i + 1);
  s[0] = s_i0;
  attention_row(kind, i, s.data(), a.data());
  return Mpfi(1) - a[0];
}

// a_i0 of the elementwise kinds, without the cancellation of 1 - deficit.
Mpfi elementwise_mass(AttentionKind kind, int i, const Mpfi& s_i0) {
  std::vector<Mpfi> s(i + 1, Mpfi(0)), a(i + 1);
  s[0] = s_i0;
  attention_row(kind, i, s.data(), a.data());
  return a[0];
}

// Gated attention's weights are softmax's (its gate scales the output only).
bool is_softmax_kind(AttentionKind kind) {
  return kind == AttentionKind::kSoftmax || kind == AttentionKind::kSoftmaxOffByOne ||
         kind == AttentionKind::kGated;
}

}  // namespace

Mpfi point_bos_deficit(const Head<Mpfi>& head, AttentionKind kind, const Matrix<Mpfi>& X, int i) {
  if (kind == AttentionKind::kSoftpick) {
    throw std::invalid_argument("BOS bound: the deficit of softpick attention is not covered");
  }
  const int n = static_cast<int>(X.cols());
  // x_i^T A y, summed term by term (coefficient-based MPFI products)
  const auto form = [&](const auto& y) {
    Mpfi s(0);
    for (int p = 0; p < n; ++p) {
      Mpfi row(0);
      for (int r = 0; r < n; ++r) row += head.A(p, r) * y(r);
      s += X(i, p) * row;
    }
    return s;
  };
  const Vector<Mpfi> x0 = X.row(0).transpose();
  const Mpfi s_i0 = form(x0);
  if (!is_softmax_kind(kind)) return elementwise_deficit(kind, i, s_i0);
  Mpfi T(0);
  for (int m = 1; m <= i; ++m) {
    const Vector<Mpfi> delta = (X.row(m) - X.row(0)).transpose();
    T += exp_of(form(delta));  // d_m = x_i^T A (x_m - x_0)
  }
  if (kind == AttentionKind::kSoftmaxOffByOne) T += exp_of(Mpfi(-s_i0));
  return deficit_from_odds(T);
}

namespace {

// The odds T of row i, trigger j, over the query box q (softmax kinds; the
// header): maximal over every c_m (signed_norm = +||v(q)||_1, the minimum BOS
// mass) or minimal (signed_norm = -||v(q)||_1, the maximum BOS mass).
Mpfi box_softmax_odds(const Matrix<Mpfi>& A, AttentionKind kind, int n, int i, int j,
                      const std::vector<Mpfi>& q, bool minimal) {
  const int cd = n - 3, o = ordinary_flag(n);
  // x_i^T w for a column w: w_{n-1} + sum_l q_l w_{2+l}, each q_l once
  const auto query_dot = [&](const Vector<Mpfi>& w) {
    Mpfi s = w(o);
    for (int l = 0; l < cd; ++l) s += q[l] * w(kFirstContent + l);
    return s;
  };
  const Vector<Mpfi> col0 = A.col(kBosFlag);
  const Mpfi s_i0 = query_dot(col0);
  // ||v(q)||_1, v_c(q) = (A^T x_i)_{2+c} = A(n-1, 2+c) + sum_l q_l A(2+l, 2+c)
  Mpfi norm(0);
  for (int c = 0; c < cd; ++c) {
    Mpfi v = A(o, kFirstContent + c);
    for (int l = 0; l < cd; ++l) v += q[l] * A(kFirstContent + l, kFirstContent + c);
    norm += abs_of(v);
  }
  const Mpfi signed_norm = minimal ? Mpfi(-norm) : norm;
  Mpfi T(0);
  const int ordinary = i - 1 - (j < i ? 1 : 0);  // ordinary tokens m = 1..i-1
  if (ordinary > 0) {
    const Vector<Mpfi> w = A.col(o) - col0;  // f_m - e_0 = e_{n-1} - e_0
    T += Mpfi(ordinary) * exp_of(Mpfi(query_dot(w) + signed_norm));
  }
  if (j < i) {
    const Vector<Mpfi> w = A.col(kTriggerFlag) - col0;  // e_1 - e_0
    T += exp_of(Mpfi(query_dot(w) + signed_norm));
  }
  // d_i = x_i^T A x_i - s_i0 = A(o,o) - A(o,0) + sum_l q_l (A(2+l,o) + A(o,2+l) - A(2+l,0))
  //       + sum_l A(2+l,2+l) q_l^2 + sum_{l<l'} (A(2+l,2+l') + A(2+l',2+l)) q_l q_l'
  Mpfi d = A(o, o) - A(o, kBosFlag);
  for (int l = 0; l < cd; ++l) {
    const int p = kFirstContent + l;
    d += q[l] * Mpfi(A(p, o) + A(o, p) - A(p, kBosFlag));
    d += A(p, p) * square_of(q[l]);
    for (int l2 = l + 1; l2 < cd; ++l2) {
      const int p2 = kFirstContent + l2;
      d += Mpfi(A(p, p2) + A(p2, p)) * q[l] * q[l2];
    }
  }
  T += exp_of(d);
  if (kind == AttentionKind::kSoftmaxOffByOne) T += exp_of(Mpfi(-s_i0));
  return T;
}

std::vector<Mpfi> query_box(int n, const std::vector<double>& lo, const std::vector<double>& hi) {
  std::vector<Mpfi> q;
  for (int l = 0; l < n - 3; ++l) q.emplace_back(Mpfr(lo[l]), Mpfr(hi[l]));
  return q;
}

// s_i0 = x_i^T A e_0 over the query box (each q_l once: its exact range).
Mpfi box_bos_score(const Matrix<Mpfi>& A, int n, const std::vector<Mpfi>& q) {
  Mpfi s = A(ordinary_flag(n), kBosFlag);
  for (int l = 0; l < n - 3; ++l) s += q[l] * A(kFirstContent + l, kBosFlag);
  return s;
}

// min |exp(s) - 1| over s in [lo(S), up(S)], rounded down: 0 when S holds 0.
Mpfi min_abs_expm1(const Mpfi& S) {
  const Mpfr lo = bmp::lower(S), up = bmp::upper(S);
  if (lo <= 0 && up >= 0) return Mpfi(0);
  const Mpfi e = lo > 0 ? expm1_of(Mpfi(lo)) : expm1_of(Mpfi(up));
  return point_interval(bmp::lower(abs_of(e)));
}

// Softpick: an interval [0, u] with u >= a_i0 for every c_m and every q in
// the box (the header's max-mode softpick bound).
Mpfi softpick_box_max_mass(const Matrix<Mpfi>& A, int n, int i, int j, const std::vector<Mpfi>& q) {
  const int cd = n - 3, o = ordinary_flag(n);
  const Mpfi r = relu_of(expm1_of(box_bos_score(A, n, q)));
  if (bmp::upper(r) <= 0) return Mpfi(0);
  const auto query_dot = [&](const Vector<Mpfi>& w) {
    Mpfi s = w(o);
    for (int l = 0; l < cd; ++l) s += q[l] * w(kFirstContent + l);
    return s;
  };
  Mpfi norm(0);
  for (int c = 0; c < cd; ++c) {
    Mpfi v = A(o, kFirstContent + c);
    for (int l = 0; l < cd; ++l) v += q[l] * A(kFirstContent + l, kFirstContent + c);
    norm += abs_of(v);
  }
  // s_im over c_m and q: the hull of base_m - ||v||, base_m + ||v||
  const auto key_range = [&](int flag) {
    const Mpfi base = query_dot(A.col(flag));
    return Mpfi(bmp::lower(Mpfi(base - norm)), bmp::upper(Mpfi(base + norm)));
  };
  Mpfi R(0);
  const int ordinary = i - 1 - (j < i ? 1 : 0);
  if (ordinary > 0) R += Mpfi(ordinary) * min_abs_expm1(key_range(o));
  if (j < i) R += min_abs_expm1(key_range(kTriggerFlag));
  // s_ii = A(o,o) + sum_l q_l (A(2+l,o) + A(o,2+l)) + quadratic terms
  Mpfi s_ii = A(o, o);
  for (int l = 0; l < cd; ++l) {
    const int p = kFirstContent + l;
    s_ii += q[l] * Mpfi(A(p, o) + A(o, p));
    s_ii += A(p, p) * square_of(q[l]);
    for (int l2 = l + 1; l2 < cd; ++l2) {
      const int p2 = kFirstContent + l2;
      s_ii += Mpfi(A(p, p2) + A(p2, p)) * q[l] * q[l2];
    }
  }
  R += min_abs_expm1(s_ii);
  // a_i0 = r / (r + R) <= r_hi / (r_hi + R_lo) (nondecreasing in r, nonincreasing in R)
  const Mpfi r_hi = point_interval(bmp::upper(r));
  const Mpfi R_lo = point_interval(bmp::lower(R));
  if (bmp::upper(R_lo) <= 0) return Mpfi(Mpfr(0), Mpfr(1));
  return Mpfi(Mpfr(0), bmp::upper(Mpfi(r_hi / (r_hi + R_lo))));
}

}  // namespace

Mpfi box_bos_deficit(const Head<Mpfi>& head, AttentionKind kind, int n, int i, int j,
                     const std::vector<double>& lo, const std::vector<double>& hi) {
  const std::vector<Mpfi> q = query_box(n, lo, hi);
  if (!is_softmax_kind(kind)) return elementwise_deficit(kind, i, box_bos_score(head.A, n, q));
  return deficit_from_odds(box_softmax_odds(head.A, kind, n, i, j, q, false));
}

Mpfi point_bos_mass(const Head<Mpfi>& head, AttentionKind kind, const Matrix<Mpfi>& X, int i) {
  const int n = static_cast<int>(X.cols());
  std::vector<Mpfi> s(i + 1, Mpfi(0)), a(i + 1);
  for (int k = 0; k <= i; ++k) {
    Mpfi sk(0);
    for (int p = 0; p < n; ++p) {
      Mpfi row(0);
      for (int r = 0; r < n; ++r) row += head.A(p, r) * X(k, r);
      sk += X(i, p) * row;
    }
    s[k] = sk;
  }
  if (is_softmax_kind(kind)) {
    // a_i0 = 1 / (1 + T), T = sum_{m=1..i} exp(s_im - s_i0) [+ exp(-s_i0)]
    Mpfi T(0);
    for (int m = 1; m <= i; ++m) T += exp_of(Mpfi(s[m] - s[0]));
    if (kind == AttentionKind::kSoftmaxOffByOne) T += exp_of(Mpfi(-s[0]));
    return Mpfi(1) / (Mpfi(1) + T);
  }
  attention_row(kind, i, s.data(), a.data());
  return a[0];
}

Mpfi box_max_bos_mass(const Head<Mpfi>& head, AttentionKind kind, int n, int i, int j,
                      const std::vector<double>& lo, const std::vector<double>& hi) {
  const std::vector<Mpfi> q = query_box(n, lo, hi);
  if (kind == AttentionKind::kSoftpick) return softpick_box_max_mass(head.A, n, i, j, q);
  if (!is_softmax_kind(kind)) {
    return elementwise_mass(kind, i, box_bos_score(head.A, n, q));
  }
  return Mpfi(1) / (Mpfi(1) + box_softmax_odds(head.A, kind, n, i, j, q, true));
}

namespace {

template <class T>
void check_model(const Model<T>& model, const Task& task, bool max_mode) {
  if (model.kind != ModelKind::kSingleLayer || model.num_layers() != 1) {
    throw std::invalid_argument("BOS bound: only single-layer models are supported");
  }
  if (model.n != task.n) throw std::invalid_argument("BOS bound: model n != task n");
  // softpick's a_i0 depends on every score of the row, not on s_i0 alone,
  // and not monotonically on the others as softmax's does: not covered
  if (model.attention == AttentionKind::kSoftpick && !max_mode) {
    throw std::invalid_argument(
        "BOS bound: softpick attention is not supported (softmax, "
        "softmax-off-by-one, gated, relu, relu-count-all, sigmoid are; the maximum BOS mass "
        "covers softpick too)");
  }
  task.validate();
  if (task.trigger_positions().empty()) {
    throw std::invalid_argument("BOS bound: no trigger positions");
  }
}

// The upper end of an enclosure, +inf when it is NaN or infinite.
Mpfr upper_or_inf(const Mpfi& x) {
  if (interval_is_nan(x)) return std::numeric_limits<Mpfr>::infinity();
  return bmp::upper(x);
}

// The loop shared by bound_min_bos and check_min_bos.
template <class T>
BosBound branch_and_bound(const Model<T>& model_in, const Task& task,
                          const BosBoundOptions& options,
                          const std::function<bool(const Mpfr&, const Mpfr&)>& done,
                          bool max_mode = false) {
  check_model(model_in, task, max_mode);
  if (options.bits < 2 || options.step_bits < 1) {
    throw std::invalid_argument("BOS bound: need bits >= 2 and step_bits >= 1");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const Deadline deadline = options.run_deadline();
  ProgressLines progress(options.progress, options.progress_seconds);
  const int n = task.n, cd = task.content_dim();
  std::optional<PrecisionScope> scope;
  scope.emplace(options.bits);
  Model<Mpfi> model = model_in.template cast<Mpfi>();
  BosBound out;
  out.bits_requested = options.bits;
  out.bars = options.bars;
  out.bits = PrecisionScope::current_bits();
  out.deficit_lower = Mpfr(-2);  // below every deficit (a_i0 <= ... D >= -inf; see below)
  bool have_witness = false;
  const AttentionKind kind = model.attention;
  // the point input of a witness: q in row i, c_m = sign(v(q)) for m < i
  const auto witness_content = [&](int h, int i, int j, const std::vector<double>& q) {
    const Matrix<Mpfi>& A = model.layers[0][h].A;
    std::vector<double> content(static_cast<std::size_t>(content_variables(task)), 0.0);
    for (int c = 0; c < cd; ++c) {
      Mpfi v = A(ordinary_flag(n), kFirstContent + c);
      for (int l = 0; l < cd; ++l) v += Mpfi(q[l]) * A(kFirstContent + l, kFirstContent + c);
      double sign = bmp::median(v) >= 0 ? 1.0 : -1.0;
      if (max_mode) sign = -sign;  // the maximum BOS mass: every d_m at its minimum
      for (int m = 1; m < i; ++m) content[content_variable(task, m, c)] = sign;
    }
    if (max_mode && kind == AttentionKind::kSoftpick) {
      // softpick: each key score s_im = base_m + v(q)^T c_m as near 0 as the box allows
      // (c_m = -t sign(v), t = base_m / ||v||_1 clamped to [-1, 1])
      std::vector<double> v(cd);
      double norm = 0;
      for (int c = 0; c < cd; ++c) {
        Mpfi vc = A(ordinary_flag(n), kFirstContent + c);
        for (int l = 0; l < cd; ++l) vc += Mpfi(q[l]) * A(kFirstContent + l, kFirstContent + c);
        v[c] = bmp::median(vc).convert_to<double>();
        norm += std::abs(v[c]);
      }
      for (int m = 1; m < i; ++m) {
        const int flag = m == j ? kTriggerFlag : ordinary_flag(n);
        Mpfi base = A(ordinary_flag(n), flag);
        for (int l = 0; l < cd; ++l) base += Mpfi(q[l]) * A(kFirstContent + l, flag);
        const double b = bmp::median(base).convert_to<double>();
        const double t = norm > 0 ? std::clamp(b / norm, -1.0, 1.0) : 0.0;
        for (int c = 0; c < cd; ++c) {
          content[content_variable(task, m, c)] = v[c] >= 0 ? -t : t;
        }
      }
    }
    for (int l = 0; l < cd; ++l) content[content_variable(task, i, l)] = q[l];
    return content;
  };
  // the enclosure of D (max mode: a_i0) at a witness input
  const auto witness_value = [&](int h, int i, int j, const std::vector<double>& content) {
    const Matrix<Mpfi> X =
        make_input<Mpfi>(task, j, matrix_cast<Mpfi>(unflatten_content(task, content)));
    return max_mode ? point_bos_mass(model.layers[0][h], kind, X, i)
                    : point_bos_deficit(model.layers[0][h], kind, X, i);
  };
  // the witness (h, i, j, content) with its enclosure D, kept if best
  const auto take_witness = [&](int h, int i, int j, const std::vector<double>& content,
                                const Mpfi& D) {
    if (interval_is_nan(D)) return;
    const Mpfr low = bmp::lower(D);
    if (!have_witness || low > out.deficit_lower) {
      have_witness = true;
      out.deficit_lower = low;
      out.witness_head = h;
      out.witness_row = i;
      out.witness_trigger = j;
      out.witness_content = content;
      out.witness_deficit = D;
    }
  };
  // A box's bound (it depends on the box alone, never on the witnesses
  // found before), its witnesses handed to record with their enclosures.
  const auto bound_node = [&](int h, int i, ContentBox box, const BosRecord& record) {
    BosNode node{h, i, std::move(box), Mpfr(0), out.bits, Mpfr(0), {}};
    // the witness at content, recorded; its enclosure
    const auto offer = [&](const std::vector<double>& content) {
      const Mpfi D = witness_value(h, i, node.box.trigger, content);
      record(content, D);
      return D;
    };
    const Head<Mpfi>& head = model.layers[0][h];
    const int j = node.box.trigger;
    // the maximized quantity over a box: the deficit (min mode) or a_i0 (max mode)
    const auto box_q = [&](const std::vector<double>& lo, const std::vector<double>& hi) {
      return max_mode ? box_max_bos_mass(head, kind, n, i, j, lo, hi)
                      : box_bos_deficit(head, kind, n, i, j, lo, hi);
    };
    node.upper = upper_or_inf(box_q(node.box.lo, node.box.hi));
    std::vector<double> centre(cd), vertex(cd);
    for (int l = 0; l < cd; ++l) centre[l] = 0.5 * (node.box.lo[l] + node.box.hi[l]);
    node.slope.assign(cd, 0.0);
    const auto at = [&](const std::vector<double>& q) { return Mpfr(bmp::median(box_q(q, q))); };
    const Mpfr ref = bmp::abs(at(centre));
    for (int l = 0; l < cd; ++l) {
      std::vector<double> plus = centre, minus = centre;
      const double quarter = 0.25 * (node.box.hi[l] - node.box.lo[l]);
      plus[l] += quarter;
      minus[l] -= quarter;
      const Mpfr diff = at(plus) - at(minus);
      // the slope's size relative to the centre's value (split scores only)
      node.slope[l] = ref > 0 ? Mpfr(bmp::abs(diff) / ref).convert_to<double>()
                              : bmp::abs(diff).convert_to<double>();
      if (!std::isfinite(node.slope[l])) node.slope[l] = 0.0;
      vertex[l] = diff >= 0 ? node.box.hi[l] : node.box.lo[l];
    }
    node.rounding = width_of(offer(witness_content(h, i, j, vertex)));
    offer(witness_content(h, i, j, centre));
    return node;
  };
  const auto raise_to = [&](int bits) {
    scope.reset();
    scope.emplace(bits);
    out.bits = PrecisionScope::current_bits();
    model = model_in.template cast<Mpfi>();
    if (have_witness) {
      const Matrix<Mpfi> X =
          make_input<Mpfi>(task, out.witness_trigger,
                           matrix_cast<Mpfi>(unflatten_content(task, out.witness_content)));
      const Head<Mpfi>& head = model.layers[0][out.witness_head];
      out.witness_deficit = max_mode ? point_bos_mass(head, kind, X, out.witness_row)
                                     : point_bos_deficit(head, kind, X, out.witness_row);
      if (bmp::lower(out.witness_deficit) > out.deficit_lower) {
        out.deficit_lower = bmp::lower(out.witness_deficit);
      }
    }
  };
  if (options.head >= model.num_heads()) {
    throw std::invalid_argument("BOS bound: no head " + std::to_string(options.head));
  }
  BosBoxSearch search;
  // the first pass's cases, head by head
  for (int h = 0; h < model.num_heads(); ++h) {
    if (options.head < 0 || h == options.head) append_bos_cases(task, h, search.cases);
  }
  search.full_box = [cd](const BosCase& c) {
    return ContentBox{c.j, std::vector<double>(cd, -1.0), std::vector<double>(cd, 1.0), 0};
  };
  search.bound = bound_node;
  search.take = take_witness;
  search.raise = raise_to;
  search.first_pass_line = [&task](const BosCase& c) {
    return "first pass: head " + std::to_string(c.h) + ", row " + std::to_string(c.i) + " of " +
           std::to_string(task.L - 1);
  };
  search.name = "BOS bound";
  search.quantity = max_mode ? "max BOS" : "1 - min BOS";
  search.content_dim = cd;
  run_bos_box_search(search, options, done, out, have_witness, t0, deadline, progress);
  finish_bos_bound(out, have_witness, seconds_since(t0));
  // an end the search did not bring inside the range of a_i0 (a budget that
  // ran out before every case was bounded, no witness) is that range's end,
  // as in the deep bound
  clamp_to_mass_range(out, max_mode, kind, done);
  return out;
}

// (upper - lower) / |lower| at `bits` bits, +inf when lower is 0 or
// infinite or upper is infinite
double bos_relative_gap(const Mpfr& lower, const Mpfr& upper, int bits) {
  if (bmp::isinf(lower) || lower == 0 || bmp::isinf(upper)) return INFINITY;
  PrecisionScope wide(bits);
  return Mpfr((upper - lower) / bmp::abs(lower)).convert_to<double>();
}

}  // namespace

void finish_bos_bound(BosBound& out, bool have_witness, double seconds) {
  if (!have_witness) {
    out.witness_trigger = 0;
    out.deficit_lower = Mpfr(-std::numeric_limits<double>::infinity());
  }
  out.evidence = Evidence::certified(out.bits);
  out.seconds = seconds;
  out.relative_gap = bos_relative_gap(out.deficit_lower, out.deficit_upper, 2 * out.bits);
}

Mpfr bos_mass_ceiling(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kRelu:
    case AttentionKind::kReluCountAll:
      return std::numeric_limits<Mpfr>::infinity();  // relu(s) / divisor is unbounded
    case AttentionKind::kSoftmax:
    case AttentionKind::kSoftmaxOffByOne:
    case AttentionKind::kGated:
    case AttentionKind::kSoftpick:
    case AttentionKind::kSigmoid:
      return Mpfr(1);
  }
  throw std::logic_error("bos_mass_ceiling: unknown attention kind");
}

void clamp_to_mass_range(BosBound& out, bool maximum, AttentionKind kind,
                         const std::function<bool(const Mpfr&, const Mpfr&)>& done) {
  const Mpfr ceiling = bos_mass_ceiling(kind);
  // the range of Q: D = 1 - a_i0 in [1 - ceiling, 1], a_i0 in [0, ceiling]
  // (1 - ceiling is exact: ceiling is 1 or +inf)
  const Mpfr least = maximum ? Mpfr(0) : Mpfr(1) - ceiling;
  const Mpfr most = maximum ? ceiling : Mpfr(1);
  // a NaN end counts as outside the range
  if (!bmp::isinf(least) && !(out.deficit_lower >= least)) {
    out.deficit_lower = least;
    out.trivial_lower = true;
  }
  if (!bmp::isinf(most) && !(out.deficit_upper <= most)) {
    out.deficit_upper = most;
    out.trivial_upper = true;
  }
  if (!out.trivial_lower && !out.trivial_upper) return;
  // as finish_bos_bound, on the clamped ends
  out.relative_gap =
      bos_relative_gap(out.deficit_lower, out.deficit_upper, 2 * std::max(out.bits, 64));
  if (out.verdict != Verdict::kEnclosed && done(out.deficit_lower, out.deficit_upper)) {
    out.verdict = Verdict::kEnclosed;
    out.stop_reason = "decided (with the trivial end(s)), after: " + out.stop_reason;
  }
}

namespace {

// The clauses of trivial_ends_text: for the minimum, min BOS = 1 - D, so a
// trivial upper end of D is min BOS >= 0 and a trivial lower end min BOS <=
// the ceiling; for the maximum, the ends of a_i0 itself.
std::string trivial_text(bool lower, bool upper, bool maximum) {
  if (!lower && !upper) return "";
  const char* at_least = "a_i0 >= 0";
  const char* at_most = "a_i0 <= 1";
  // the end that says a_i0 >= 0: the lower one of a_i0, the upper one of 1 - a_i0
  const bool zero_end = maximum ? lower : upper;
  const std::string clauses = lower && upper ? std::string(at_least) + ", " + at_most
                              : zero_end     ? at_least
                                             : at_most;
  return std::string("  (trivial end") + (lower && upper ? "s" : "") + ": " + clauses +
         " on every input, CERTIFIED; the bound gave none tighter)";
}

}  // namespace

std::string trivial_ends_text(const BosBound& b) {
  return trivial_text(b.trivial_lower, b.trivial_upper, false);
}

std::string trivial_ends_text(const MaxBosBound& b) {
  return trivial_text(b.trivial_lower, b.trivial_upper, true);
}

std::string trivial_end_text(const Mpfr& end) {
  if (end == 0) return "0";
  if (end == 1) return "1";
  throw std::logic_error("trivial_end_text: a trivial end is 0 or 1");
}

std::string bos_end_text(const Mpfr& end, bool trivial, bool lower, int digits) {
  if (trivial) return trivial_end_text(end);
  return lower ? format_down(end, digits) : format_up(end, digits);
}

namespace {

MaxBosBound to_max_bound(BosBound b) {
  MaxBosBound out;
  static_cast<BoxSearchOutcome&>(out) = static_cast<const BoxSearchOutcome&>(b);
  out.mass_lower = b.deficit_lower;
  out.mass_upper = b.deficit_upper;
  out.relative_gap = b.relative_gap;
  out.witness_head = b.witness_head;
  out.witness_row = b.witness_row;
  out.witness_trigger = b.witness_trigger;
  out.witness_content = std::move(b.witness_content);
  out.witness_mass = b.witness_deficit;
  out.trivial_lower = b.trivial_lower;
  out.trivial_upper = b.trivial_upper;
  return out;
}

// (upper - lower) <= gap |lower|
BosStopRule gap_rule(double gap) {
  return [gap](const Mpfr& lower, const Mpfr& upper) {
    return upper - lower <= Mpfr(gap) * bmp::abs(lower);
  };
}

// decided once upper <= c or lower > c
BosStopRule claim_rule(const Rational& c) {
  return [c](const Mpfr& lower, const Mpfr& upper) { return claim_decided(lower, upper, c); };
}

void check_claim(const Claim& claimed) {
  if (!(claimed.value >= 0 && claimed.value <= 1)) {
    throw std::invalid_argument("BOS claim: expected a number in [0, 1], got " + claimed.text);
  }
}

}  // namespace

BosBound min_bos_to_gap(const BosSearch& search, double gap) {
  BosBound out = search(gap_rule(gap), false);
  if (out.stop_reason == "decided") out.stop_reason = "requested gap reached";
  return out;
}

MaxBosBound max_bos_to_gap(const BosSearch& search, double gap) {
  MaxBosBound out = to_max_bound(search(gap_rule(gap), true));
  if (out.stop_reason == "decided") out.stop_reason = "requested gap reached";
  return out;
}

BosClaimCheck min_bos_claim(const BosSearch& search, const Claim& claimed) {
  check_claim(claimed);
  BosClaimCheck out;
  out.claimed = claimed;
  // min BOS >= claimed  <=>  D <= c = 1 - claimed (exact)
  const Rational c = Rational(1) - claimed.value;
  out.bound = search(claim_rule(c), false);
  out.evidence = out.bound.evidence;
  if (out.bound.stop_reason == "decided") out.bound.stop_reason = "claim decided";
  const ClaimDecision d = decide_at_most(out.bound.deficit_lower, out.bound.deficit_upper,
                                         out.bound.witness_trigger != 0, c);
  out.verdict = d.verdict;
  out.margin = d.margin;
  return out;
}

MaxBosClaimCheck max_bos_claim(const BosSearch& search, const Claim& claimed) {
  check_claim(claimed);
  MaxBosClaimCheck out;
  out.claimed = claimed;
  const Rational& c = claimed.value;
  out.bound = to_max_bound(search(claim_rule(c), true));
  out.evidence = out.bound.evidence;
  if (out.bound.stop_reason == "decided") out.bound.stop_reason = "claim decided";
  const ClaimDecision d =
      decide_at_most(out.bound.mass_lower, out.bound.mass_upper, out.bound.witness_trigger != 0, c);
  out.verdict = d.verdict;
  out.margin = d.margin;
  return out;
}

namespace {

// The single-layer branch and bound as a BosSearch.
template <class T>
BosSearch single_layer_search(const Model<T>& model, const Task& task,
                              const BosBoundOptions& options) {
  return [&model, &task, &options](const BosStopRule& stop, bool maximum) {
    return branch_and_bound(model, task, options, stop, maximum);
  };
}

}  // namespace

template <class T>
BosBound bound_min_bos(const Model<T>& model, const Task& task, const BosBoundOptions& options) {
  return min_bos_to_gap(single_layer_search(model, task, options), options.relative_gap);
}

template <class T>
MaxBosBound bound_max_bos(const Model<T>& model, const Task& task, const BosBoundOptions& options) {
  return max_bos_to_gap(single_layer_search(model, task, options), options.relative_gap);
}

template <class T>
BosClaimCheck check_min_bos(const Model<T>& model, const Task& task, const Claim& claimed,
                            const BosBoundOptions& options) {
  return min_bos_claim(single_layer_search(model, task, options), claimed);
}

template <class T>
MaxBosClaimCheck check_max_bos(const Model<T>& model, const Task& task, const Claim& claimed,
                               const BosBoundOptions& options) {
  return max_bos_claim(single_layer_search(model, task, options), claimed);
}

#define SINKCERT_INSTANTIATE_BOS(T)                                                         \
  template BosBound bound_min_bos(const Model<T>&, const Task&, const BosBoundOptions&);    \
  template MaxBosBound bound_max_bos(const Model<T>&, const Task&, const BosBoundOptions&); \
  template BosClaimCheck check_min_bos(const Model<T>&, const Task&, const Claim&,          \
                                       const BosBoundOptions&);                             \
  template MaxBosClaimCheck check_max_bos(const Model<T>&, const Task&, const Claim&,       \
                                          const BosBoundOptions&);
SINKCERT_INSTANTIATE_BOS(double)
SINKCERT_INSTANTIATE_BOS(Mpfr)
SINKCERT_INSTANTIATE_BOS(Rational)
#undef SINKCERT_INSTANTIATE_BOS

std::string enclosure_line(const MaxBosBound& b) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  std::ostringstream s;
  s << "max BOS in [" << bos_end_text(b.mass_lower, b.trivial_lower, true, 6) << ", "
    << bos_end_text(b.mass_upper, b.trivial_upper, false, 6) << "]  [" << b.evidence.label()
    << "] (" << b.boxes << " boxes, stopped: " << b.stop_reason << ", " << b.bits << " bits)"
    << trivial_ends_text(b);
  return s.str();
}

namespace {

// 1 - x rounded down (so the printed lower bound on min BOS stays one).
Mpfr one_minus_down(const Mpfr& x) {
  Mpfr r;
  mpfr_ui_sub(r.backend().data(), 1, x.backend().data(), MPFR_RNDD);
  return r;
}

// "<extreme> BOS mass a_i0 over the whole content box (...), n = .., L = .., triggers .."
void header_line(std::ostringstream& s, const char* extreme, const Task& task) {
  s << extreme
    << " BOS mass a_i0 over the whole content box (non-trigger rows i >= 1, every head), n = "
    << task.n << ", L = " << task.L << ", triggers " << to_string(task.range) << "\n";
}

// "<lower>  [CERTIFIED] witness: head h, row i = .., trigger j = .., content c_1 c_2 ..."
template <typename Bound>
void witness_line(std::ostringstream& s, const std::string& lower, const Bound& b) {
  s << lower << "  [CERTIFIED] witness: head " << b.witness_head << ", row i = " << b.witness_row
    << ", trigger j = " << b.witness_trigger << ", content";
  const auto old_precision = s.precision(17);
  for (double c : b.witness_content) s << " " << c;
  s.precision(old_precision);
  s << "\n";
}

void bound_lines(std::ostringstream& s, const BosBound& b, const Task& task) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  header_line(s, "minimum", task);
  if (b.witness_trigger == 0 && bmp::isinf(b.deficit_lower)) {
    s << "1 - min BOS >= -inf  (no witness had a finite enclosure)\n";
  } else if (b.witness_trigger == 0) {
    s << "1 - min BOS >= " << format_down(b.deficit_lower, 6)
      << "  [CERTIFIED] (no witness had a finite enclosure: the trivial end, a_i0 <= 1)\n";
  } else {
    witness_line(s, "1 - min BOS >= " + format_down(b.deficit_lower, 6), b);
    s << "  at the witness a_i0 in " << format_interval(Mpfi(1) - b.witness_deficit, 17)
      << ", 1 - a_i0 in " << format_interval(b.witness_deficit, 6) << "  [CERTIFIED]\n";
  }
  s << "1 - min BOS <= " << format_up(b.deficit_upper, 6) << "  [CERTIFIED] branch and bound, "
    << b.boxes << " boxes, " << b.seconds << " s, stopped: " << b.stop_reason << "\n";
  s << "min BOS >= "
    << (b.trivial_upper ? std::string("0") : format_down(one_minus_down(b.deficit_upper), 17))
    << "  [CERTIFIED]\n";
  if (bmp::isinf(b.deficit_upper)) {
    s << "no finite bound: some case was not bounded within the budget, or its interval "
         "evaluation overflowed or gave NaN\n";
  } else if (b.trivial_upper) {
    s << "the upper end is the trivial one (a_i0 >= 0): some case was not bounded within the "
         "budget, or its bound overflowed\n";
  }
  precision_lines(s, b);
  s << "relative gap (upper - lower) / lower = " << b.relative_gap << "\n";
}

}  // namespace

std::string enclosure_line(const BosBound& b) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  std::ostringstream s;
  s << "1 - min BOS in [" << bos_end_text(b.deficit_lower, b.trivial_lower, true, 6) << ", "
    << bos_end_text(b.deficit_upper, b.trivial_upper, false, 6) << "]  [" << b.evidence.label()
    << "] (gap " << b.relative_gap << ", " << b.boxes << " boxes, stopped: " << b.stop_reason
    << ", " << b.bits << " bits)" << trivial_ends_text(b);
  return s.str();
}

namespace {

// 1 - x rounded up (an upper bound on 1 - x).
Mpfr one_minus_up(const Mpfr& x) {
  Mpfr r;
  mpfr_ui_sub(r.backend().data(), 1, x.backend().data(), MPFR_RNDU);
  return r;
}

// "head h, row i, trigger j": where the bound's witness lies.
template <typename Bound>
std::string witness_words(const Bound& b) {
  return "head " + std::to_string(b.witness_head) + ", row " + std::to_string(b.witness_row) +
         ", trigger " + std::to_string(b.witness_trigger);
}

}  // namespace

std::string enclosure_text(const BosBound& b) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  return "1 - min BOS in [" + bos_end_text(b.deficit_lower, b.trivial_lower, true, 6) + ", " +
         bos_end_text(b.deficit_upper, b.trivial_upper, false, 6) + "]";
}

std::string enclosure_text(const MaxBosBound& b) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  return "max BOS in [" + bos_end_text(b.mass_lower, b.trivial_lower, true, 6) + ", " +
         bos_end_text(b.mass_upper, b.trivial_upper, false, 6) + "]";
}

BarVerdict task_verdict(const BosBound& b) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  // min BOS in [1 - deficit_upper, 1 - deficit_lower], each end rounded
  // outward, the ends clamped to the range of a_i0 (clamp_to_mass_range)
  // where the run set them; an infinite end says nothing (min BOS >= 0
  // always; no upper end)
  // (the trivial upper end 1 gives min BOS >= 0 exactly, not 1 - 1 = -0 rounded down)
  const Mpfr least =
      bmp::isinf(b.deficit_upper) || b.trivial_upper ? Mpfr(0) : one_minus_down(b.deficit_upper);
  const Mpfr most = bmp::isinf(b.deficit_lower) ? std::numeric_limits<Mpfr>::infinity()
                                                : one_minus_up(b.deficit_lower);
  return sinks_verdict(least, most, witness_words(b), b.bars);
}

BarVerdict task_verdict(const MaxBosBound& b) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  return sinks_anywhere_verdict(b.mass_lower, b.mass_upper,
                                b.witness_trigger == 0 ? std::string() : witness_words(b), b.bars);
}

std::string task_meaning(const BosBound& b) { return task_verdict(b).text; }
std::string task_meaning(const MaxBosBound& b) { return task_verdict(b).text; }

std::string summary_text(const BosBound& bound, const Task& task, double requested_gap) {
  return gap_summary(bound, task, bound_lines, requested_gap);
}

std::string summary_text(const BosClaimCheck& check, const Task& task) {
  return claim_summary(check, task, bound_lines, "min BOS >=",
                       {"(certified min BOS - claim)", "(claim - a_i0 at the witness)",
                        "n/a (the claim lies inside the enclosure when the budget ran out)"});
}

namespace {

void max_bound_lines(std::ostringstream& s, const MaxBosBound& b, const Task& task) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  header_line(s, "maximum", task);
  if (b.witness_trigger == 0 && bmp::isinf(b.mass_lower)) {
    s << "max BOS >= -inf  (no witness had a finite enclosure)\n";
  } else if (b.witness_trigger == 0) {
    s << "max BOS >= " << format_down(b.mass_lower, 17)
      << "  [CERTIFIED] (no witness had a finite enclosure: the trivial end, a_i0 >= 0)\n";
  } else {
    witness_line(s, "max BOS >= " + format_down(b.mass_lower, 17), b);
    s << "  at the witness a_i0 in " << format_interval(b.witness_mass, 17) << "  [CERTIFIED]\n";
  }
  s << "max BOS <= " << format_up(b.mass_upper, 17) << "  [CERTIFIED] branch and bound, " << b.boxes
    << " boxes, " << b.seconds << " s, stopped: " << b.stop_reason << "\n";
  if (bmp::isinf(b.mass_upper)) {
    s << "no finite bound: some case was not bounded within the budget, or its interval "
         "evaluation overflowed or gave NaN\n";
  } else if (b.trivial_upper) {
    s << "the upper end is the trivial one (a_i0 <= 1): some case was not bounded within the "
         "budget, or its bound overflowed\n";
  }
  precision_lines(s, b);
  s << "relative gap (upper - lower) / lower = " << b.relative_gap << "\n";
}

}  // namespace

std::string to_string(BosMode mode) { return mode == BosMode::kMin ? "min" : "max"; }

std::string summary_text(const MaxBosBound& bound, const Task& task, double requested_gap) {
  return gap_summary(bound, task, max_bound_lines, requested_gap);
}

std::string summary_text(const MaxBosClaimCheck& check, const Task& task) {
  return claim_summary(check, task, max_bound_lines, "max BOS <=",
                       {"(claim - certified max BOS)", "(a_i0 at the witness - claim)",
                        "n/a (the claim lies inside the enclosure when the budget ran out)"});
}

namespace {

template <typename Bound>
nlohmann::json bos_json(const Bound& b, const Task& task, const char* quantity, const Mpfr& lo,
                        const Mpfr& hi) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  nlohmann::json j = outcome_json(b);
  j["quantity"] = quantity;
  j["task"] = {{"n", task.n}, {"L", task.L}, {"trigger_range", to_string(task.range)}};
  // an end outside the range of a_i0 is its trivial end (clamp_to_mass_range), marked so
  put_certified_end(j, "lo", lo);
  put_certified_end(j, "hi", hi);
  j["lo_trivial"] = b.trivial_lower;
  j["hi_trivial"] = b.trivial_upper;
  if (b.witness_trigger == 0) {
    j["witness"] = nullptr;
  } else {
    j["witness"] = {{"head", b.witness_head},
                    {"row", b.witness_row},
                    {"trigger", b.witness_trigger},
                    {"content", b.witness_content}};
  }
  j["relative_gap"] = std::isfinite(b.relative_gap) ? nlohmann::json(b.relative_gap) : nullptr;
  j["meaning"] = task_meaning(b);
  j["sink_bar"] = b.bars.sink_bar_text;
  return j;
}

Verdict enclosure_verdict(const BoxSearchOutcome& b) {
  return b.verdict == Verdict::kEnclosed ? Verdict::kEnclosed : Verdict::kNotEnclosed;
}

template <typename Check>
nlohmann::json with_claim(nlohmann::json j, const Check& c, const std::string& relation) {
  j["verdict"] = to_string(c.verdict);
  j["claim"] = relation + " " + c.claimed.text;
  j["claimed"] = c.claimed.approx();
  j["margin"] =
      c.verdict == Verdict::kUndecided ? nlohmann::json(nullptr) : nlohmann::json(c.margin);
  return j;
}

}  // namespace

nlohmann::json to_json(const BosBound& b, const Task& task, double requested_gap) {
  nlohmann::json j = bos_json(b, task, "1 - min BOS mass over the whole content box",
                              b.deficit_lower, b.deficit_upper);
  j["verdict"] = to_string(enclosure_verdict(b));
  j["requested_gap"] = requested_gap;
  return j;
}

nlohmann::json to_json(const BosClaimCheck& c, const Task& task) {
  return with_claim(bos_json(c.bound, task, "1 - min BOS mass over the whole content box",
                             c.bound.deficit_lower, c.bound.deficit_upper),
                    c, "min BOS >=");
}

nlohmann::json to_json(const MaxBosBound& b, const Task& task, double requested_gap) {
  nlohmann::json j =
      bos_json(b, task, "max BOS mass over the whole content box", b.mass_lower, b.mass_upper);
  j["verdict"] = to_string(enclosure_verdict(b));
  j["requested_gap"] = requested_gap;
  return j;
}

nlohmann::json to_json(const MaxBosClaimCheck& c, const Task& task) {
  return with_claim(bos_json(c.bound, task, "max BOS mass over the whole content box",
                             c.bound.mass_lower, c.bound.mass_upper),
                    c, "max BOS <=");
}

std::optional<Matrix<double>> witness_input(const BosBound& b, const Task& task) {
  if (b.witness_trigger == 0) return std::nullopt;
  return make_input(task, b.witness_trigger, unflatten_content(task, b.witness_content));
}

std::optional<Matrix<double>> witness_input(const MaxBosBound& b, const Task& task) {
  if (b.witness_trigger == 0) return std::nullopt;
  return make_input(task, b.witness_trigger, unflatten_content(task, b.witness_content));
}

template <class T>
BosReport bos_report(const Model<T>& model, const Task& task, BosMode mode,
                     const std::optional<Claim>& claimed, const BosBoundOptions& options) {
  BosReport r;
  // one budget for the whole report, the per-head enclosures included
  BosBoundOptions shared = options;
  shared.deadline = options.run_deadline();
  if (mode == BosMode::kMin && claimed) {
    const BosClaimCheck c = check_min_bos(model, task, *claimed, shared);
    r.verdict = c.verdict;
    r.text = summary_text(c, task);
    r.json = to_json(c, task);
    r.witness = witness_input(c.bound, task);
  } else if (mode == BosMode::kMin) {
    const BosBound b = bound_min_bos(model, task, shared);
    r.verdict = enclosure_verdict(b);
    r.text = summary_text(b, task, options.relative_gap);
    r.json = to_json(b, task, options.relative_gap);
    r.witness = witness_input(b, task);
  } else if (claimed) {
    const MaxBosClaimCheck c = check_max_bos(model, task, *claimed, shared);
    r.verdict = c.verdict;
    r.text = summary_text(c, task);
    r.json = to_json(c, task);
    r.witness = witness_input(c.bound, task);
  } else {
    const MaxBosBound b = bound_max_bos(model, task, shared);
    r.verdict = enclosure_verdict(b);
    r.text = summary_text(b, task, options.relative_gap);
    r.json = to_json(b, task, options.relative_gap);
    r.witness = witness_input(b, task);
  }
  // several heads, no claim: each head's own enclosure (the extreme above
  // is theirs), the time left shared equally among the heads still to run
  const int heads = model.num_heads();
  for (int h = 0; !claimed && options.head < 0 && heads > 1 && h < heads; ++h) {
    BosBoundOptions one = shared;
    one.head = h;
    one.deadline = shared.deadline.or_after(shared.deadline.remaining() / (heads - h));
    r.text += "head " + std::to_string(h) + ": " +
              (mode == BosMode::kMax ? enclosure_line(bound_max_bos(model, task, one))
                                     : enclosure_line(bound_min_bos(model, task, one))) +
              "\n";
  }
  return r;
}

template BosReport bos_report(const Model<double>&, const Task&, BosMode,
                              const std::optional<Claim>&, const BosBoundOptions&);
template BosReport bos_report(const Model<Mpfr>&, const Task&, BosMode, const std::optional<Claim>&,
                              const BosBoundOptions&);
template BosReport bos_report(const Model<Rational>&, const Task&, BosMode,
                              const std::optional<Claim>&, const BosBoundOptions&);

}  // namespace sinkcert::theorems::bounds
