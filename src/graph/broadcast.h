// Multidirectional (numpy) broadcasting, as ONNX's elementwise ops define it
// (https://onnx.ai/onnx/repo-docs/Broadcasting.html).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/host_tensor.h"

namespace onda {

// The broadcast of two shapes; ModelError when a pair of dimensions differs and neither is 1.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// The values per channel of `t` when it broadcasts per channel against x [N, C, ...] (a scalar, or
// all dims 1 but the one aligned with C, which is C; what the fusions of per-channel affine maps and
// PRelu slopes accept): C values. nullopt when it is anything else.
std::optional<std::vector<double>> per_channel_values(const HostTensor& t, const Shape& x_shape);

// For each axis of `to`, the stride (in elements) of `from` along it when `from` is broadcast to `to`:
// 0 where `from` is broadcast or has no such axis. ModelError when `from` does not broadcast to `to`.
std::vector<int64_t> broadcast_source_strides(const Shape& from, const Shape& to);

// For each element of `to` (C order), the flat index of the element of `from` it reads when `from`
// is broadcast to `to` (from must broadcast to it).
std::vector<int64_t> broadcast_source_indices(const Shape& from, const Shape& to);

// Dimension arithmetic on values read from a model: ModelError naming `what` on int64 overflow
// (a corrupt attribute must not become undefined behaviour).
int64_t checked_add(int64_t a, int64_t b, const char* what);
int64_t checked_multiply(int64_t a, int64_t b, const char* what);

// An axis in [-rank, rank) made non-negative; ModelError naming `what` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what);

}  // namespace onda
