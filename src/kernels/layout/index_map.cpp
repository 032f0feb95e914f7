#include "kernels/layout/index_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr int kMaxRank = 8;
constexpr uint32_t kWorkgroupSize = 256;

// Mirrors `Params` in index_map.wgsl.
struct IndexMapUniforms {
  uint32_t threads, chunks_per_row, row_length, rank;
  uint32_t row_rank, out_offset;
  int32_t in_offset;
  uint32_t pad_bits;
  uint32_t shape[kMaxRank];
  uint32_t out_strides[kMaxRank];
  int32_t start[kMaxRank];
  int32_t step[kMaxRank];
  int32_t in_dim[kMaxRank];
  int32_t in_strides[kMaxRank];
};

// A dim whose input coordinate never leaves [0, in_dim) and walks it one by one: the boundary rule
// is the identity on it, so it may merge with a neighbour like any affine dim.
bool plain(const IndexMapDim& d) {
  return d.start == 0 && d.step == 1 && d.in_dim == d.size;
}

// Without a boundary rule every dim is affine: fold start into the base and step into the stride.
// With one, unit dims that stay inside the input fold into the base; the rest keep their tables.
IndexMap simplify(IndexMap map) {
  std::vector<IndexMapDim> dims;
  for (IndexMapDim d : map.dims) {
    if (map.boundary == Boundary::None) {
      map.in_base += d.start * d.in_stride;
      d.in_stride *= d.step;
      d.start = 0;
      d.step = 1;
      d.in_dim = d.size;
    }
    if (d.size == 1 && d.start >= 0 && d.start < d.in_dim) {
      map.in_base += d.start * d.in_stride;
      continue;
    }
    if (d.size == 1 && map.boundary != Boundary::Constant) {
      // Reflect/Edge/Wrap of one fixed coordinate: resolve it here.
      int64_t x = d.start;
      const int64_t n = d.in_dim;
      if (map.boundary == Boundary::Edge) x = std::clamp<int64_t>(x, 0, n - 1);
      if (map.boundary == Boundary::Wrap) x = ((x % n) + n) % n;
      if (map.boundary == Boundary::Reflect) {
        const int64_t period = std::max<int64_t>(2 * (n - 1), 1);
        x = ((x % period) + period) % period;
        if (x >= n) x = period - x;
      }
      map.in_base += x * d.in_stride;
      continue;
    }
    if (!dims.empty()) {
      IndexMapDim& outer = dims.back();
      const bool out_adjacent = outer.out_stride == d.size * d.out_stride;
      const bool in_adjacent = outer.in_stride == d.in_dim * d.in_stride;
      if (out_adjacent && in_adjacent && plain(outer) && plain(d)) {
        outer.size *= d.size;
        outer.in_dim *= d.in_dim;
        outer.out_stride = d.out_stride;
        outer.in_stride = d.in_stride;
        continue;
      }
    }
    dims.push_back(d);
  }
  map.dims = dims;
  return map;
}

int32_t checked_i32(int64_t v, const std::string& name) {
  if (v < INT32_MIN || v > INT32_MAX) throw std::invalid_argument(name + ": index or stride past 2^31");
  return static_cast<int32_t>(v);
}

}  // namespace

void record_index_map(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                      const Tensor& output, IndexMap map, const std::string& name) {
  require_same_dtype(name, input, output);
  int64_t count = 1;
  for (const auto& d : map.dims) count *= d.size;
  if (count == 0) return;
  require_bindable(kc, input, name);
  require_bindable(kc, output, name);
  map = simplify(std::move(map));
  if (map.dims.empty()) map.dims.push_back({1, 1, 0, 1, 1, 0});  // a single element
  if (map.dims.size() > kMaxRank) {
    throw std::invalid_argument(fmt::format("{}: more than {} dims after coalescing", name, kMaxRank));
  }
  const bool half = input.dtype() == DType::f16;

  IndexMapUniforms u{};
  u.rank = static_cast<uint32_t>(map.dims.size());
  const int64_t out_offset = map.out_base + output.element_offset(kc.gpu);
  u.out_offset = static_cast<uint32_t>(checked_i32(out_offset, name));
  u.in_offset = checked_i32(map.in_base + input.element_offset(kc.gpu), name);
  u.pad_bits = map.pad_bits;
  for (size_t d = 0; d < map.dims.size(); ++d) {
    const IndexMapDim& m = map.dims[d];
    u.shape[d] = static_cast<uint32_t>(m.size);
    u.out_strides[d] = static_cast<uint32_t>(checked_i32(m.out_stride, name));
    u.start[d] = checked_i32(m.start, name);
    u.step[d] = checked_i32(m.step, name);
    u.in_dim[d] = checked_i32(m.in_dim, name);
    u.in_strides[d] = checked_i32(m.in_stride, name);
  }
  checked_i32(count, name);

  uint64_t rows = 0;
  if (half) {
    // Rows: the trailing dims that are contiguous in the output; one invocation per output word.
    int64_t run = 1;
    size_t d = map.dims.size();
    while (d > 0 && map.dims[d - 1].out_stride == run) run *= map.dims[--d].size;
    bool rows_even = run % 2 == 0 && out_offset % 2 == 0;
    for (size_t k = 0; k < d; ++k) rows_even = rows_even && map.dims[k].out_stride % 2 == 0;
    u.row_rank = static_cast<uint32_t>(map.dims.size() - d);
    u.row_length = static_cast<uint32_t>(run);
    // A row starting at an odd element spans one more word.
    u.chunks_per_row = static_cast<uint32_t>(rows_even ? run / 2 : run / 2 + 1);
    rows = static_cast<uint64_t>(count / run);
  } else {
    // Rows: the innermost dim, 4 elements per invocation.
    u.row_rank = 1;
    u.row_length = static_cast<uint32_t>(map.dims.back().size);
    u.chunks_per_row = (u.row_length + 3) / 4;
    rows = static_cast<uint64_t>(count / map.dims.back().size);
  }
  const uint64_t threads = rows * u.chunks_per_row;
  if (threads > 0xFFFFFFFFull) throw std::invalid_argument(name + ": more than 2^32 invocations");
  u.threads = static_cast<uint32_t>(threads);

  const TemplateValues values = {
      {"HALF", half ? "1" : "0"},
      {"BOUNDARY_CONSTANT", map.boundary == Boundary::Constant ? "1" : "0"},
      {"BOUNDARY_REFLECT", map.boundary == Boundary::Reflect ? "1" : "0"},
      {"BOUNDARY_EDGE", map.boundary == Boundary::Edge ? "1" : "0"},
      {"BOUNDARY_WRAP", map.boundary == Boundary::Wrap ? "1" : "0"},
  };
  const auto& pipeline =
      kc.pipelines.get(render_shader("layout/index_map.wgsl", values), {}, "layout " + name);
  const auto workgroups =
      gpu::split_workgroups((threads + kWorkgroupSize - 1) / kWorkgroupSize, kc.gpu.limits());
  recorder.dispatch(pipeline, {input.binding(kc.gpu), output.binding(kc.gpu)}, &u, sizeof(u), workgroups,
                    name);
}

void record_copy(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                 const Tensor& output) {
  if (input.shape() != output.shape()) {
    throw std::invalid_argument(fmt::format("Copy: output {} differs from input {}",
                                            shape_string(output.shape()), shape_string(input.shape())));
  }
  const auto strides = contiguous_strides(input.shape());
  IndexMap map;
  for (size_t d = 0; d < strides.size(); ++d) {
    map.dims.push_back({input.shape()[d], strides[d], 0, 1, input.shape()[d], strides[d]});
  }
  record_index_map(kc, recorder, input, output, std::move(map), "Copy");
}

}  // namespace onda::kernels
