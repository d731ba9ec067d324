// SPDX-License-Identifier: MIT
//
// The hot loop of BatchForward (src/batch_forward.h): a single-layer softmax
// model with H heads on chunks of kLanes sequences, every operation in double.
// A chunk is stacked token-major, X (R x n, R = L kLanes): row k kLanes + b is
// token k of sequence b, so for fixed token and coordinate the kLanes
// sequences are contiguous and the per-sequence steps run on SIMD packets
// across sequences (no tiny per-sequence products):
//   Q       = X [A_1 .. A_H]                                one GEMM, R x H n
//   s^h_ik  = sum_d Q(i, h n + d) x_kd                      k <= i, per lane
//   a^h_ik  = exp(s^h_ik - m_i) / sum_{t<=i} exp(s^h_it - m_i),   m_i = max_{t<=i} s^h_it
//   V^h_i   = sum_{k<=i} a^h_ik x_k                         row i, columns h n ..
//   F       = V [M_1^T; ..; M_H^T]                          one GEMM, R x n:
//             f_i = sum_h M_h V^h_i
// The exp runs as one Eigen array exp over the block s^h_i0 .. s^h_ii of all
// lanes. A last, short chunk is padded with zero inputs whose results are
// dropped.
//
// Written once, compiled twice: src/batch_forward.cc includes it with
// SINKCERT_BATCH_KERNEL_NS = baseline (the project's x86-64 baseline, SSE2:
// 2-wide packets, pmadd = multiply then add), src/internal/batch_kernel_avx2.cc
// with SINKCERT_BATCH_KERNEL_NS = avx2 under -mavx2 -mfma (4-wide packets,
// pmadd fused) and with namespace Eigen renamed (see that file), so no inline
// or template function is emitted twice under one name with different code.
// Only BatchKernelArgs (raw pointers and sizes) crosses between the two.
#pragma once

#include <Eigen/Core>

#ifndef SINKCERT_BATCH_KERNEL_NS
#error "define SINKCERT_BATCH_KERNEL_NS (baseline or avx2) before including batch_kernel.h"
#endif

namespace sinkcert::internal {

// Sequences per chunk, the SIMD lanes of the per-sequence steps: a multiple
// of every packet size (2 for SSE2, 4 for AVX2); the chunk's X, Q, V and F
// (4 R n doubles for one head, 128 KiB at L = n = 16) stay in the L2 cache.
constexpr long kLanes = 16;

// All matrices column-major; a leading dimension is the distance between
// columns. Chunk c holds sequences c kLanes .. min((c+1) kLanes, batch) - 1.
struct BatchKernelArgs {
  const double* x = nullptr;  // (batch L) x n stacked inputs, X_b in rows b L ..
  long x_ld = 0;
  long batch = 0;  // number of sequences
  int L = 0, n = 0, heads = 0;
  const double* a_cat = nullptr;  // n x (heads n): [A_1 .. A_H]
  const double* m_cat = nullptr;  // (heads n) x n: [M_1^T; ..; M_H^T]
  double* out = nullptr;          // (batch L) x n outputs, leading dimension out_ld
  long out_ld = 0;
  double* bos = nullptr;  // (batch L) x heads BOS masses a^h_i0, or null
  long bos_ld = 0;
};

namespace SINKCERT_BATCH_KERNEL_NS {

namespace {

using Packet = Eigen::internal::packet_traits<double>::type;
constexpr long kPacket = Eigen::internal::packet_traits<double>::size;
constexpr long kPackets = kLanes / kPacket;
static_assert(kLanes % kPacket == 0, "kLanes must be a multiple of the packet size");

using Eigen::internal::ploadu;
using Eigen::internal::pmadd;
using Eigen::internal::pset1;
using Eigen::internal::pstoreu;

// out_j = sum_{t < count} u_t * w_{j,t} for j = 0, 1 (w_{1,t} = w_{0,t} + w_gap),
// each a vector of kLanes lanes; u_t = u + t u_step, w_{0,t} = w + t w_step.
// Two outputs per pass share the loads of u.
inline void dot_lanes_2(const double* u, long u_step, const double* w, long w_step, long w_gap,
                        long count, double* out0, double* out1) {
  Packet acc0[kPackets], acc1[kPackets];
  for (long p = 0; p < kPackets; ++p) acc0[p] = acc1[p] = pset1<Packet>(0.0);
  for (long t = 0; t < count; ++t, u += u_step, w += w_step) {
    for (long p = 0; p < kPackets; ++p) {
      const Packet up = ploadu<Packet>(u + p * kPacket);
      acc0[p] = pmadd(up, ploadu<Packet>(w + p * kPacket), acc0[p]);
      acc1[p] = pmadd(up, ploadu<Packet>(w + w_gap + p * kPacket), acc1[p]);
    }
  }
  for (long p = 0; p < kPackets; ++p) {
    pstoreu(out0 + p * kPacket, acc0[p]);
    pstoreu(out1 + p * kPacket, acc1[p]);
  }
}

// out = sum_{t < count} u_t * w_t, the one-output form of dot_lanes_2.
inline void dot_lanes(const double* u, long u_step, const double* w, long w_step, long count,
                      double* out) {
  Packet acc[kPackets];
  for (long p = 0; p < kPackets; ++p) acc[p] = pset1<Packet>(0.0);
  for (long t = 0; t < count; ++t, u += u_step, w += w_step) {
    for (long p = 0; p < kPackets; ++p) {
      acc[p] = pmadd(ploadu<Packet>(u + p * kPacket), ploadu<Packet>(w + p * kPacket), acc[p]);
    }
  }
  for (long p = 0; p < kPackets; ++p) pstoreu(out + p * kPacket, acc[p]);
}

}  // namespace

// Evaluates chunks first_chunk .. last_chunk - 1. Each chunk is computed the
// same way whichever call covers it, so the split over threads does not
// change a single bit of the result.
void batch_kernel(const BatchKernelArgs& args, long first_chunk, long last_chunk) {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;
  const long L = args.L, n = args.n, H = args.heads, R = L * kLanes;
  const Eigen::Map<const Mat> a_cat(args.a_cat, n, H * n);
  const Eigen::Map<const Mat> m_cat(args.m_cat, H * n, n);
  Mat X(R, n), Q(R, H * n), V(R, H * n), F(R, n);
  Eigen::ArrayXd s(R);  // s[k kLanes + b] = s_ik of lane b, for the current i and h

  for (long c = first_chunk; c < last_chunk; ++c) {
    const long first = c * kLanes;
    const long count = args.batch - first < kLanes ? args.batch - first : kLanes;
    // X(k kLanes + b, d) = x_kd of sequence first + b (0 for padding lanes)
    if (count < kLanes) X.setZero();
    for (long d = 0; d < n; ++d) {
      for (long b = 0; b < count; ++b) {
        const double* src = args.x + d * args.x_ld + (first + b) * L;
        for (long k = 0; k < L; ++k) X(k * kLanes + b, d) = src[k];
      }
    }
    // Q = X [A_1 .. A_H]: row k kLanes + b, block h, is x_k^T A_h of lane b
    Q.noalias() = X * a_cat;
    for (long h = 0; h < H; ++h) {
      for (long i = 0; i < L; ++i) {
        // s_ik = sum_d Q(i, h n + d) x_kd, keys k <= i in pairs
        const double* q = Q.data() + h * n * R + i * kLanes;
        long k = 0;
        for (; k + 1 <= i; k += 2) {
          dot_lanes_2(q, R, X.data() + k * kLanes, R, kLanes, n, &s[k * kLanes],
                      &s[(k + 1) * kLanes]);
        }
        if (k == i) dot_lanes(q, R, X.data() + k * kLanes, R, n, &s[k * kLanes]);
        // m_i = max_{k<=i} s_ik, then s_ik - m_i
        Packet m[kPackets];
        for (long p = 0; p < kPackets; ++p) {
          m[p] = ploadu<Packet>(&s[p * kPacket]);
          for (long t = 1; t <= i; ++t) {
            m[p] = Eigen::internal::pmax(m[p], ploadu<Packet>(&s[t * kLanes + p * kPacket]));
          }
          for (long t = 0; t <= i; ++t) {
            double* st = &s[t * kLanes + p * kPacket];
            pstoreu(st, Eigen::internal::psub(ploadu<Packet>(st), m[p]));
          }
        }
        // e_ik = exp(s_ik - m_i), one vectorized exp over the (i + 1) kLanes block
        s.head((i + 1) * kLanes) = s.head((i + 1) * kLanes).exp();
        // a_ik = e_ik / Z_i,  Z_i = sum_{t<=i} e_it (summed in t order, as forward.h)
        for (long p = 0; p < kPackets; ++p) {
          Packet z = ploadu<Packet>(&s[p * kPacket]);
          for (long t = 1; t <= i; ++t) {
            z = Eigen::internal::padd(z, ploadu<Packet>(&s[t * kLanes + p * kPacket]));
          }
          for (long t = 0; t <= i; ++t) {
            double* st = &s[t * kLanes + p * kPacket];
            pstoreu(st, Eigen::internal::pdiv(ploadu<Packet>(st), z));
          }
        }
        if (args.bos != nullptr) {
          double* bos = args.bos + h * args.bos_ld + first * L + i;
          for (long b = 0; b < count; ++b) bos[b * L] = s[b];
        }
        // V^h_i = sum_{k<=i} a_ik x_k, coordinates d in pairs
        double* v = V.data() + h * n * R + i * kLanes;
        long d = 0;
        for (; d + 1 < n; d += 2) {
          dot_lanes_2(&s[0], kLanes, X.data() + d * R, kLanes, R, i + 1, v + d * R,
                      v + (d + 1) * R);
        }
        if (d < n) dot_lanes(&s[0], kLanes, X.data() + d * R, kLanes, i + 1, v + d * R);
      }
    }
    // f_i = sum_h M_h V^h_i: F = V [M_1^T; ..; M_H^T]
    F.noalias() = V * m_cat;
    for (long d = 0; d < n; ++d) {
      for (long b = 0; b < count; ++b) {
        double* dst = args.out + d * args.out_ld + (first + b) * L;
        for (long k = 0; k < L; ++k) dst[k] = F(k * kLanes + b, d);
      }
    }
  }
}

}  // namespace SINKCERT_BATCH_KERNEL_NS
}  // namespace sinkcert::internal
