// SPDX-License-Identifier: MIT
// Placeholder until the Theorem 3 checker lands.
namespace sinkcert::theorems {}
