// SPDX-License-Identifier: MIT
//
// The vertex bound of relu_vertex_bound.h: the exact sign conditions, then
// the enumeration of query and key vertices in double, raised by the
// rounding allowance and enclosed in MPFI.
#include "theorems/bounds/relu_vertex_bound.h"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "src/elapsed.h"

namespace sinkcert::theorems {

namespace {

// Rounding allowance, relative to the size R = 16 R_A R_M + 4 of the
// evaluated expression with every coefficient and variable replaced by its
// absolute value (R_A = sum |A_rc|, R_M = max_d sum_c |M_dc|; each of the
// terms B, S, phi, the corrections and their combination is at most a few
// R_A R_M + 1). The expression is built from + - * / and max (which adds no
// rounding): along any path at most 4 n + 24 <= 88 roundings (n <= 16),
// plus one for the model's entries rounded to double, so its error is at
// most gamma_89 R < 90 * 2^-53 R < 2^-46 R (Higham's bound for sums of
// products, any summation order). The allowance 2^-30 R leaves a factor
// 2^16 for any miscount and stays far below any gap worth asking for.
constexpr double kRoundingAllowance = 0x1p-30;
// Largest content dimension n - 3 enumerated: 2^13 query x 2^13 key
// vertices per (coordinate, sign) takes seconds.
constexpr int kMaxContentDim = 13;

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Range of the score (e_fq + q)^T A (e_fk + x) over the box, as
// (centre, radius); a flag with content (query or key) adds the content
// terms; BOS has none.
struct ScoreRange {
  Rational centre, radius;
};
ScoreRange score_range(const Matrix<Rational>& A, int n, int fq, int fk) {
  const bool q_content = fq != kBosFlag, k_content = fk != kBosFlag;
  ScoreRange r{A(fq, fk), Rational(0)};
  const int c0 = kFirstContent, c1 = n - 1;  // content coordinates [c0, c1)
  for (int c = c0; c < c1; ++c) {
    if (q_content) r.radius += bmp::abs(A(c, fk));
    if (k_content) r.radius += bmp::abs(A(fq, c));
    for (int c2 = c0; c2 < c1 && q_content && k_content; ++c2) r.radius += bmp::abs(A(c, c2));
  }
  return r;
}

// The sign structure of the header: which of the trigger row's terms stay,
// and the largest ReLU score of the other rows (their only key is BOS).
struct SignStructure {
  std::string reason;  // the first condition that fails; empty when all hold
  bool bos = false, ordinary = false, self = false;  // trigger row: score > 0
  Rational bos_row;                                  // r_0 = max(A[0,0], 0)
  Rational ordinary_bos;                             // max(0, A[o,0] + sum_c |A[c,0]|)
};

SignStructure sign_structure(const Matrix<Rational>& A, int n) {
  const int ord = ordinary_flag(n);
  SignStructure out;
  const char* names[] = {"BOS", "ordinary", "trigger"};
  // the trigger row: a trigger key is the query itself
  bool* active[] = {&out.bos, &out.ordinary, &out.self};
  const int flags[] = {kBosFlag, ord, kTriggerFlag};
  for (int k = 0; k < 3; ++k) {
    const ScoreRange r = score_range(A, n, kTriggerFlag, flags[k]);
    *active[k] = r.centre - r.radius > 0;
    if (!*active[k] && !(r.centre + r.radius <= 0)) {
      out.reason = std::string("a trigger query's score of ") +
                   (k == 2 ? "itself" : std::string("a ") + names[k] + " key") +
                   " changes sign over the box";
      return out;
    }
  }
  for (int k = 1; k < 3; ++k) {
    const ScoreRange o = score_range(A, n, ord, flags[k]);
    if (!(o.centre + o.radius <= 0)) {
      out.reason = std::string("an ordinary query's score of a ") + names[k] +
                   " key is not <= 0 over the whole box";
      return out;
    }
  }
  const ScoreRange o = score_range(A, n, ord, kBosFlag);
  out.ordinary_bos = std::max(Rational(0), Rational(o.centre + o.radius));
  out.bos_row = std::max(Rational(0), A(kBosFlag, kBosFlag));
  return out;
}

// The 2^cd tokens with flag `flag` and content at the vertices (vertex v:
// content c is -1 if bit c of v is 0, else +1).
RowMatrix vertex_tokens(int n, int cd, int flag) {
  const int count = 1 << cd;
  RowMatrix t = RowMatrix::Zero(count, n);
  for (int v = 0; v < count; ++v) {
    t(v, flag) = 1.0;
    for (int c = 0; c < cd; ++c) t(v, kFirstContent + c) = (v >> c) & 1 ? 1.0 : -1.0;
  }
  return t;
}

}  // namespace

template <class T>
ReluVertexBound relu_vertex_bound(const Model<T>& model, const Task& task,
                                  const std::vector<int>& triggers, const Deadline& deadline,
                                  const ProgressSink& progress_sink) {
  const auto t0 = std::chrono::steady_clock::now();
  ProgressLines progress(progress_sink);
  ReluVertexBound out;
  const int n = task.n, cd = task.content_dim();
  if (model.attention != AttentionKind::kRelu || model.kind != ModelKind::kSingleLayer ||
      model.num_layers() != 1 || model.num_heads() != 1 || model.n != n) {
    out.reason = "not a single-layer single-head ReLU model of dimension n";
    return out;
  }
  if (cd > kMaxContentDim) {
    out.reason = "more than 2^" + std::to_string(kMaxContentDim) + " content vertices";
    return out;
  }
  // the exact model the file denotes (the signs and the other rows' bound)
  const Model<Rational> exact = model.template cast<Rational>();
  const SignStructure sign = sign_structure(exact.layers[0][0].A, n);
  out.reason = sign.reason;
  if (!out.reason.empty()) return out;
  out.applies = true;
  const Model<double> md = model.template cast<double>();
  const Eigen::MatrixXd& A = md.layers[0][0].A;
  const Eigen::MatrixXd& M = md.layers[0][0].M;
  const Eigen::MatrixXd As = A + A.transpose();
  // R = 16 R_A R_M + 4 (kRoundingAllowance)
  const double RA = A.cwiseAbs().sum(), RM = M.cwiseAbs().rowwise().sum().maxCoeff();
  const double allowance = kRoundingAllowance * (16 * RA * RM + 4);
  const RowMatrix Q = vertex_tokens(n, cd, kTriggerFlag);
  const RowMatrix K = vertex_tokens(n, cd, ordinary_flag(n));
  const int V = static_cast<int>(Q.rows());
  // QA(q, .) = qt^T A: column 0 the BOS score, content columns b_l(q)
  const RowMatrix QA = Q * A;
  // QAs(q, .) = ((A + A^T) qt)^T
  const RowMatrix QAs = Q * As;
  const Eigen::MatrixXd KT = K.transpose();
  // the value, the BOS and the self terms per query vertex and coordinate
  const Eigen::VectorXd self_score = (QA.array() * Q.array()).rowwise().sum();
  std::vector<double> best(triggers.size(), -std::numeric_limits<double>::infinity());
  constexpr int kBlock = 512;  // query vertices per block (kBlock x 2^cd scores)
  RowMatrix scores;
  for (int b0 = 0; b0 < V; b0 += kBlock) {
    const int rows = std::min(kBlock, V - b0);
    if (b0 > 0)
      progress.maybe_send([&] {
        const double left = progress.elapsed() / b0 * (V - b0);  // at the pace so far
        return "ReLU vertex bound: " + std::to_string(b0) + " of " + std::to_string(V) +
               " query vertices, about " + progress_number(left) + " s more (estimate)";
      });
    // scores(q, k) = qt^T A xt_k
    scores.noalias() = QA.middleRows(b0, rows) * KT;
    for (int d = 0; d < n; ++d) {
      if (deadline.expired()) {
        out.applies = false;
        out.deadline_passed = true;
        out.reason = "the deadline passed before every vertex was enumerated";
        out.seconds = seconds_since(t0);
        return out;
      }
      const Eigen::VectorXd m = M.row(d).transpose();
      // key values m . xt and targets xt_d
      const Eigen::VectorXd value = K * m;
      const Eigen::VectorXd target = K.col(d);
      for (const double sigma : {1.0, -1.0}) {
        for (int r = 0; r < rows; ++r) {
          const int q = b0 + r;
          // max over key vertices of sigma phi(q, x) = sigma (s v - xt_d)
          // (phi := -xt_d when the ordinary score is <= 0)
          const double kmax =
              sign.ordinary
                  ? (sigma * (scores.row(r).transpose().array() * value.array() - target.array()))
                        .maxCoeff()
                  : (-sigma * target.array()).maxCoeff();
          // B(q) = (qt^T A e_0) M[d,0];  S(q) = (qt^T A qt)(m . qt) - qt_d
          const double vq = Q.row(q).dot(m);
          // (B := 0, S := -qt_d when their scores are <= 0)
          const double bos = sign.bos ? QA(q, kBosFlag) * M(d, kBosFlag) : 0.0;
          const double self = sign.self ? self_score(q) * vq - Q(q, d) : -Q(q, d);
          double kk = 0, kq = 0;
          for (int l = 0; l < cd && (sign.ordinary || sign.self); ++l) {
            const int c = kFirstContent + l;
            // kk: max(0, -sigma b_l(q) m_l)  (times 1/j below)
            if (sign.ordinary) kk += std::max(0.0, -sigma * QA(q, c) * m(c));
            // c_l(q) = sigma (2 A_ll (m . qt) + 2 ((A + A^T) qt)_l m_l), affine in q;
            // lo_l = c_l - (its q_l coefficient) q_l - |that coefficient|
            const double full = sigma * (2 * A(c, c) * vq + 2 * QAs(q, c) * m(c));
            const double own = sigma * (2 * A(c, c) * m(c) + 2 * As(c, c) * m(c));
            if (sign.self) kq += std::max(0.0, -(full - own * Q(q, c) - std::abs(own))) / 2;
          }
          for (std::size_t t = 0; t < triggers.size(); ++t) {
            const double j = triggers[t];
            // [sigma (B + S) + kq] / j + (j - 1) (kmax / j + kk / j)
            const double v = (sigma * (bos + self) + kq) / j + (j - 1) * (kmax + kk) / j;
            best[t] = std::max(best[t], v);
          }
        }
      }
    }
  }
  // the other rows: r_i max_d |M[d,0]|, r_i largest at the first ordinary row
  const Matrix<Rational>& M_exact = exact.layers[0][0].M;
  Rational m0(0);
  for (int d = 0; d < n; ++d) m0 = std::max(m0, Rational(bmp::abs(M_exact(d, kBosFlag))));
  for (std::size_t t = 0; t < triggers.size(); ++t) {
    const int j = triggers[t];
    const int first_ordinary = j == 1 ? 2 : 1;
    Rational r = sign.bos_row;
    // r_i = max(0, A[o,0] + sum_c |A[c,0]|) / i
    if (first_ordinary < task.L) r = std::max(r, Rational(sign.ordinary_bos / first_ordinary));
    const Mpfi other_rows = scalar_cast<Mpfi>(Rational(r * m0));
    // upper = best + allowance, enclosed (the exact error is >= 0 too)
    const Mpfi row_j = Mpfi(std::max(best[t], 0.0)) + Mpfi(allowance);
    out.caps.push_back({j, std::max(Mpfr(bmp::upper(row_j)), Mpfr(bmp::upper(other_rows)))});
  }
  out.seconds = seconds_since(t0);
  return out;
}

template ReluVertexBound relu_vertex_bound(const Model<double>&, const Task&,
                                           const std::vector<int>&, const Deadline&,
                                           const ProgressSink&);
template ReluVertexBound relu_vertex_bound(const Model<Mpfr>&, const Task&, const std::vector<int>&,
                                           const Deadline&, const ProgressSink&);
template ReluVertexBound relu_vertex_bound(const Model<Rational>&, const Task&,
                                           const std::vector<int>&, const Deadline&,
                                           const ProgressSink&);

}  // namespace sinkcert::theorems
