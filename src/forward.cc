// SPDX-License-Identifier: MIT
// The forward pass compiled once for the scalar types that most units use
// (declared extern in src/forward.h).
#include "src/forward.h"

namespace sinkcert {

template ForwardResult<double> forward(const Model<double>&, const Matrix<double>&, bool);
template ForwardResult<Mpfr> forward(const Model<Mpfr>&, const Matrix<Mpfr>&, bool);
template ForwardResult<Mpfi> forward(const Model<Mpfi>&, const Matrix<Mpfi>&, bool);

}  // namespace sinkcert
