// SPDX-License-Identifier: MIT
// Placeholder translation unit until the first search component lands.
namespace sinkcert::search {}
