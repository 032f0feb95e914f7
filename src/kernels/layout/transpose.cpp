#include "kernels/layout/transpose.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/common/binding_window.h"
#include "kernels/layout/index_map.h"
#include "kernels/layout/layout_plan.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr int kMaxRank = 8;
constexpr uint32_t kTile = 32;
constexpr int64_t kMinTiledDim = 8;

}  // namespace

// Mirrors `Params` in transpose_tiled.wgsl.
struct TiledTranspose::Geometry {
  uint32_t m, n, in_stride_m, out_stride_n;
  uint32_t tiles_m, tiles_n, batch_rank, groups;
  uint32_t in_offset, out_offset, pad0, pad1;
  uint32_t batch_shape[kMaxRank];
  uint32_t batch_in_strides[kMaxRank];
  uint32_t batch_out_strides[kMaxRank];
};

namespace {

// The transpose with unit dims dropped and input dims that stay adjacent in the output merged:
// input shape `shape` (contiguous), output dim k = input dim perm[k].
struct CoalescedTranspose {
  Shape shape;
  std::vector<int64_t> perm;
};

CoalescedTranspose coalesce(const Shape& in, std::span<const int64_t> perm) {
  // Keep non-unit input dims, renumbered.
  std::vector<int64_t> renumber(in.size(), -1);
  Shape kept;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1) {
      renumber[d] = static_cast<int64_t>(kept.size());
      kept.push_back(in[d]);
    }
  }
  std::vector<int64_t> p;
  for (int64_t d : perm) {
    if (renumber[d] >= 0) p.push_back(renumber[d]);
  }
  // Merge runs i, i+1, ... that appear consecutively in p.
  std::vector<std::vector<int64_t>> groups;  // in output order, each a run of input dims
  for (int64_t d : p) {
    if (!groups.empty() && groups.back().back() + 1 == d) {
      groups.back().push_back(d);
    } else {
      groups.push_back({d});
    }
  }
  // New input order: groups sorted by their first input dim.
  std::vector<size_t> order(groups.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  CoalescedTranspose c;
  std::vector<int64_t> new_index(groups.size());
  for (size_t k = 0; k < order.size(); ++k) {
    int64_t size = 1;
    for (int64_t d : groups[order[k]]) size *= kept[d];
    c.shape.push_back(size);
    new_index[order[k]] = static_cast<int64_t>(k);
  }
  for (size_t g = 0; g < groups.size(); ++g) c.perm.push_back(new_index[g]);
  return c;
}

}  // namespace

Shape transpose_output_shape(const Shape& input, std::span<const int64_t> perm) {
  const size_t rank = input.size();
  std::vector<int64_t> p(perm.begin(), perm.end());
  if (p.empty()) {
    for (size_t d = rank; d-- > 0;) p.push_back(static_cast<int64_t>(d));
  }
  if (p.size() != rank) {
    throw std::invalid_argument(
        fmt::format("Transpose: perm of length {} for input {}", p.size(), shape_string(input)));
  }
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t d : p) {
    if (d < 0 || d >= static_cast<int64_t>(rank) || seen[d]) {
      throw std::invalid_argument(
          fmt::format("Transpose: perm [{}] is not a permutation of {} dims", fmt::join(p, ", "), rank));
    }
    seen[d] = true;
    out.push_back(input[d]);
  }
  return out;
}

TiledTranspose::TiledTranspose(const KernelContext& kc, const Geometry& geometry, DType dtype)
    : kc_(kc),
      geometry_(std::make_unique<Geometry>(geometry)),
      groups_(geometry.groups),
      pipeline_(&shader_pipeline(kc.pipelines, "layout/transpose_tiled.wgsl",
                                 {{"HALF", dtype == DType::f16 ? "1" : "0"}}, "layout Transpose tiled")) {}

TiledTranspose::~TiledTranspose() = default;
TiledTranspose::TiledTranspose(TiledTranspose&&) noexcept = default;

void TiledTranspose::record(gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output) const {
  Geometry u = *geometry_;
  u.in_offset = input.element_offset(kc_.gpu);
  u.out_offset = output.element_offset(kc_.gpu);
  recorder.dispatch(*pipeline_, {input.binding(kc_.gpu), output.binding(kc_.gpu)}, &u, sizeof(u),
                    gpu::split_workgroups(groups_, kc_.gpu.limits()), "Transpose");
}

namespace {

// The tiled kernel's uniforms (offsets aside) for a coalesced transpose whose innermost dim moves.
TiledTranspose::Geometry tiled_geometry(const CoalescedTranspose& c, const Shape& out_shape, int64_t m,
                                        int64_t n, int64_t out_count) {
  const size_t q = c.shape.size();
  const auto in_strides = contiguous_strides(c.shape);
  const auto out_strides = contiguous_strides(out_shape);
  TiledTranspose::Geometry u{};
  size_t n_position = 0;
  for (size_t k = 0; k < q; ++k) {
    if (c.perm[k] == static_cast<int64_t>(q - 1)) n_position = k;
  }
  u.m = static_cast<uint32_t>(m);
  u.n = static_cast<uint32_t>(n);
  u.in_stride_m = static_cast<uint32_t>(in_strides[c.perm[q - 1]]);
  u.out_stride_n = static_cast<uint32_t>(out_strides[n_position]);
  u.tiles_m = static_cast<uint32_t>((m + kTile - 1) / kTile);
  u.tiles_n = static_cast<uint32_t>((n + kTile - 1) / kTile);
  uint64_t batches = 1;
  for (size_t k = 0; k + 1 < q; ++k) {
    if (k == n_position) continue;
    u.batch_shape[u.batch_rank] = static_cast<uint32_t>(out_shape[k]);
    u.batch_in_strides[u.batch_rank] = static_cast<uint32_t>(in_strides[c.perm[k]]);
    u.batch_out_strides[u.batch_rank] = static_cast<uint32_t>(out_strides[k]);
    ++u.batch_rank;
    batches *= out_shape[k];
  }
  const uint64_t groups = batches * u.tiles_m * u.tiles_n;
  if (groups > 0xFFFFFFFFull || out_count > INT32_MAX)
    throw std::invalid_argument("Transpose: more than 2^31 elements");
  u.groups = static_cast<uint32_t>(groups);
  return u;
}

}  // namespace

TransposePlan plan_transpose(const KernelContext& kc, const Shape& in, DType dtype,
                             std::span<const int64_t> perm_in, const Shape& output) {
  const Shape expected = transpose_output_shape(in, perm_in);
  if (output != expected) {
    throw std::invalid_argument(
        fmt::format("Transpose: output must be {}, got {}", shape_string(expected), shape_string(output)));
  }
  TransposePlan plan;
  if (element_count(output) == 0) return plan;
  std::vector<int64_t> perm(perm_in.begin(), perm_in.end());
  if (perm.empty()) {
    for (size_t d = in.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  const CoalescedTranspose c = coalesce(in, perm);
  const size_t q = c.shape.size();
  Shape out_shape;
  for (int64_t d : c.perm) out_shape.push_back(c.shape[d]);
  const auto in_strides = contiguous_strides(c.shape);
  const auto out_strides = contiguous_strides(out_shape);
  IndexMap map;
  for (size_t k = 0; k < q; ++k) {
    map.dims.push_back({out_shape[k], out_strides[k], 0, 1, c.shape[c.perm[k]], in_strides[c.perm[k]]});
  }
  plan.map.emplace(kc, std::move(map), dtype, "Transpose");
  // Tiles pay off when both swapped dims fill a good part of a 32x32 tile; thinner ones (complex
  // pairs [.., M, 2]) stay coalesced enough through the gather. Tensors larger than one binding go
  // through the gather too, which splits its region into pieces that each bind a window.
  const bool inner_moves = q >= 2 && c.perm[q - 1] != static_cast<int64_t>(q - 1);
  const int64_t m = inner_moves ? c.shape[c.perm[q - 1]] : 0;
  const int64_t n = inner_moves ? c.shape[q - 1] : 0;
  if (inner_moves && q <= kMaxRank && m >= kMinTiledDim && n >= kMinTiledDim) {
    plan.tiled.emplace(kc, tiled_geometry(c, out_shape, m, n, element_count(output)), dtype);
  }
  return plan;
}

void record_transpose(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                      std::span<const int64_t> perm, const Tensor& output) {
  const LayoutPlan plan(kc, LayoutProblem::transpose(input.shape(), input.dtype(), perm, output.shape()));
  require_same_dtype("Transpose", input, output);
  plan.record(recorder, std::span(&input, 1), std::span(&output, 1));
}

}  // namespace onda::kernels
