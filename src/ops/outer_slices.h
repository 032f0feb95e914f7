// Ops over tensors larger than one storage binding (e.g. attention scores [heads*batch, T, T] on
// adapters with 128 MiB bindings) run in slices of the leading dimension when slices are
// independent (elementwise ops, softmax over a later axis): each slice is a view, no copies.
#pragma once
#include <algorithm>
#include <cstdint>

#include "ops/op_context.h"

namespace onda::ops {

// Rows of dimension 0 per slice so that `bytes_per_row` times the rows fits the binding limit;
// 0 when no slicing is needed (or possible: a leading dimension of 1).
inline int64_t outer_slice_rows(const OpContext& context, int64_t leading, uint64_t bytes_per_row) {
  const auto& limits = context.kernels.gpu.limits();
  const uint64_t limit = limits.maxStorageBufferBindingSize;
  if (leading <= 1 || bytes_per_row * static_cast<uint64_t>(leading) <= limit) return 0;
  // A view's binding may start one offset alignment early and ends on a 16-byte boundary.
  const uint64_t usable = limit - std::min<uint64_t>(limit, limits.minStorageBufferOffsetAlignment + 16);
  const int64_t rows = static_cast<int64_t>(usable / std::max<uint64_t>(bytes_per_row, 1));
  // Even row counts keep float16 views on whole 32-bit words (one row: the caller's view checks).
  return rows >= 2 ? rows / 2 * 2 : 1;
}

}  // namespace onda::ops
