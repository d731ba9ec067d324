// SPDX-License-Identifier: MIT
#include "search/compressed_rows_cost.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <thread>
#include <utility>

namespace sinkcert::search {

namespace {

// Residual rows per symmetric rank update: long enough for Eigen's blocked
// kernel, short enough that a chunk of P-wide rows stays a few megabytes
// (256 x 2048 doubles = 4 MB at the 2 x 2 model of n = 16).
constexpr int kChunkRows = 256;

}  // namespace

CompressedRowsCost::CompressedRowsCost(std::vector<std::unique_ptr<ceres::CostFunction>> rows,
                                       int threads, const RankGroup* ranks, DenseIsa isa)
    : rows_(std::move(rows)),
      threads_(std::max(1, threads)),
      ranks_(ranks),
      kernel_(&dense_kernel(isa)),
      parts_(kParts),
      packed_(kParts) {
  if (rows_.empty()) throw std::invalid_argument("CompressedRowsCost: no rows");
  const std::vector<int32_t>& sizes = rows_[0]->parameter_block_sizes();
  for (const auto& row : rows_) {
    if (row->parameter_block_sizes() != sizes) {
      throw std::invalid_argument("CompressedRowsCost: rows with different parameter blocks");
    }
  }
  int total = 0;
  for (int s : sizes) {
    mutable_parameter_block_sizes()->push_back(s);
    total += s;
  }
  set_num_residuals(total + 1);
  for (const auto& row : rows_) widest_row_ = std::max(widest_row_, row->num_residuals());
}

bool CompressedRowsCost::normal_equations(double const* const* p, const std::vector<bool>& free,
                                          NormalEquations* out) const {
  const std::vector<int32_t>& sizes = parameter_block_sizes();
  const int blocks = static_cast<int>(sizes.size());
  int width = 0;
  for (int b = 0; b < blocks; ++b) width += free[b] ? sizes[b] : 0;
  const bool with_jacobian = width > 0;
  const int chunk_rows = std::max(kChunkRows, widest_row_);
  const int count = static_cast<int>(rows_.size());
  // part q sums the rows [q count / kParts, (q + 1) count / kParts)
  const auto sum_part = [&](int q) {
    CompressedRowsPart& part = parts_[q];
    NormalEquations& ne = part.ne;
    ne.G.setZero(width, width);
    ne.g.setZero(width);
    ne.S = 0;
    if (with_jacobian) {
      part.J.resize(chunk_rows, width);
      part.r.resize(chunk_rows);
    }
    part.row_jac.resize(blocks);
    int filled = 0;
    // G += J_c^T J_c (upper triangle), g += J_c^T r_c, S += |r_c|^2 for the chunk c
    const auto flush = [&] {
      if (filled == 0) return;
      kernel_->gram(ne.G.data(), ne.g.data(), &ne.S, part.J.data(), part.r.data(), filled, width);
      filled = 0;
    };
    std::vector<double*> jac(blocks, nullptr);
    for (int t = q * count / kParts; t < (q + 1) * count / kParts; ++t) {
      const ceres::CostFunction& row = *rows_[t];
      const int m = row.num_residuals();
      part.row_r.resize(m);
      for (int b = 0; b < blocks; ++b) {
        if (!free[b]) continue;
        part.row_jac[b].resize(static_cast<std::size_t>(m) * sizes[b]);
        jac[b] = part.row_jac[b].data();
      }
      if (!row.Evaluate(p, part.row_r.data(), with_jacobian ? jac.data() : nullptr)) return false;
      const Eigen::Map<const Vector<double>> r(part.row_r.data(), m);
      if (!with_jacobian) {
        ne.S += r.squaredNorm();
        continue;
      }
      if (filled + m > chunk_rows) flush();
      part.r.segment(filled, m) = r;
      int col = 0;
      for (int b = 0; b < blocks; ++b) {
        if (!free[b]) continue;
        part.J.block(filled, col, m, sizes[b]) =
            Eigen::Map<const RowMajorMatrix<double>>(part.row_jac[b].data(), m, sizes[b]);
        col += sizes[b];
      }
      filled += m;
    }
    flush();
    return true;
  };
  bool ok[kParts];
  std::exception_ptr error[kParts];
  const auto run = [&](int q) {
    try {
      ok[q] = sum_part(q);
    } catch (...) {
      ok[q] = false;
      error[q] = std::current_exception();
    }
  };
  // this rank's parts, on up to threads_ threads: thread w sums the owned
  // parts w, w + threads_, ... (in owned order)
  const RankGroup& group = ranks_or_local(ranks_);
  std::vector<int> owned;
  for (int q = 0; q < kParts; ++q) {
    ok[q] = true;
    if (group.owns(q)) owned.push_back(q);
  }
  const int workers = std::min<int>(threads_, static_cast<int>(owned.size()));
  const auto work = [&](int w) {
    for (std::size_t k = w; k < owned.size(); k += workers) run(owned[k]);
  };
  std::vector<std::thread> helpers;
  for (int w = 1; w < workers; ++w) helpers.emplace_back(work, w);
  if (workers > 0) work(0);
  for (std::thread& h : helpers) h.join();
  if (group.size() > 1) {
    // every part's sums to every rank: [ok, S, g, upper triangle of G by columns]
    for (int q = 0; q < kParts; ++q) {
      std::vector<double>& v = packed_[q];
      v.clear();
      if (!group.owns(q)) continue;
      const NormalEquations& ne = parts_[q].ne;
      const bool good = ok[q] && !error[q];
      v.push_back(good ? 1.0 : 0.0);
      if (!good) continue;
      v.push_back(ne.S);
      v.insert(v.end(), ne.g.data(), ne.g.data() + width);
      for (int c = 0; c < width; ++c) v.insert(v.end(), &ne.G(0, c), &ne.G(0, c) + c + 1);
    }
    group.share(packed_);
    for (int q = 0; q < kParts; ++q) {
      if (group.owns(q)) continue;
      const std::vector<double>& v = packed_[q];
      ok[q] = !v.empty() && v[0] == 1.0;
      if (!ok[q]) continue;
      NormalEquations& ne = parts_[q].ne;
      ne.S = v[1];
      ne.g = Eigen::Map<const Vector<double>>(v.data() + 2, width);
      ne.G.setZero(width, width);
      const double* at = v.data() + 2 + width;
      for (int c = 0; c < width; ++c, at += c) std::copy(at, at + c + 1, &ne.G(0, c));
    }
  }
  for (int q = 0; q < kParts; ++q) {
    if (error[q]) std::rethrow_exception(error[q]);
    if (!ok[q]) return false;
  }
  // the parts in order: the same sums for any thread count
  NormalEquations& sum = parts_[0].ne;
  for (int q = 1; q < kParts; ++q) {
    sum.G.triangularView<Eigen::Upper>() += parts_[q].ne.G;
    sum.g += parts_[q].ne.g;
    sum.S += parts_[q].ne.S;
  }
  sum.G.triangularView<Eigen::StrictlyLower>() = sum.G.transpose();
  // handed over without a copy (out's buffers become part 0's for next time)
  std::swap(*out, sum);
  return true;
}

bool CompressedRowsCost::Evaluate(double const* const* p, double* r, double** J) const {
  const std::vector<int32_t>& sizes = parameter_block_sizes();
  std::vector<bool> free(sizes.size(), false);
  bool any = false;
  for (std::size_t b = 0; b < sizes.size(); ++b) {
    free[b] = J != nullptr && J[b] != nullptr;
    any = any || free[b];
  }
  if (!normal_equations(p, free, &ne_)) return false;
  if (!any) {
    // a trial point: r' = (0, ..., 0, sqrt(S))
    std::fill(r, r + num_residuals() - 1, 0.0);
    r[num_residuals() - 1] = std::sqrt(ne_.S);
    return true;
  }
  return write_compressed(ne_, sizes, free, r, J, &scratch_, *kernel_);
}

}  // namespace sinkcert::search
