#include "kernels/layout/index_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
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

// The input coordinates [first, last] that coordinates [lo, hi] of one dim read after the boundary
// rule; false when none (Constant: every coordinate pads). Reflect folds (continuous, so an interval
// maps onto the interval between its extreme images: the ends and the fold points inside); Wrap
// maps an interval that crosses a multiple of the extent onto the whole extent.
bool boundary_image(Boundary boundary, int64_t lo, int64_t hi, int64_t n, int64_t& first, int64_t& last) {
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  switch (boundary) {
    case Boundary::None:
      first = lo, last = hi;
      return true;
    case Boundary::Constant:
      first = std::max<int64_t>(lo, 0), last = std::min(hi, n - 1);
      return first <= last;
    case Boundary::Edge:
      first = std::clamp<int64_t>(lo, 0, n - 1), last = std::clamp<int64_t>(hi, 0, n - 1);
      return true;
    case Boundary::Wrap:
      if (hi - lo >= n - 1 || floor_div(lo, n) != floor_div(hi, n)) {
        first = 0, last = n - 1;
      } else {
        first = lo - floor_div(lo, n) * n, last = hi - floor_div(hi, n) * n;
      }
      return true;
    case Boundary::Reflect: {
      const int64_t period = std::max<int64_t>(2 * (n - 1), 1);
      auto fold = [&](int64_t x) {
        x = ((x % period) + period) % period;
        return x >= n ? period - x : x;
      };
      if (n == 1 || hi - lo >= period) {
        first = 0, last = n - 1;
        return true;
      }
      first = std::min(fold(lo), fold(hi)), last = std::max(fold(lo), fold(hi));
      for (int64_t p = floor_div(lo, n - 1) * (n - 1); p <= hi; p += n - 1) {
        if (p < lo) continue;
        first = std::min(first, fold(p)), last = std::max(last, fold(p));
      }
      return true;
    }
  }
  return true;
}

// What a box (a map moved to its origin) touches: output elements [out_first, out_last], input
// elements [in_first, in_last] (reads = false when it reads none), and per dim its input width.
struct BoxSpans {
  int64_t out_first = 0, out_last = 0, in_first = 0, in_last = 0;
  bool reads = true;
  std::vector<int64_t> in_widths;
};

BoxSpans box_spans(const IndexMap& map) {
  BoxSpans b;
  b.out_first = b.out_last = map.out_base;
  b.in_first = b.in_last = map.in_base;
  for (const IndexMapDim& d : map.dims) {
    b.out_last += (d.size - 1) * d.out_stride;
    const int64_t end = d.start + (d.size - 1) * d.step;
    int64_t lo = 0, hi = 0;
    if (!boundary_image(map.boundary, std::min(d.start, end), std::max(d.start, end), d.in_dim, lo, hi)) {
      b.reads = false;
      lo = hi = 0;
    }
    b.in_first += std::min(lo * d.in_stride, hi * d.in_stride);
    b.in_last += std::max(lo * d.in_stride, hi * d.in_stride);
    b.in_widths.push_back((hi - lo) * std::abs(d.in_stride));
  }
  return b;
}

}  // namespace

// One dispatch over the region of `map` (simplified, at most kMaxRank dims), the input and output
// bound as `in` and `out`: map.in_base and map.out_base are flat indices of the tensors.
void IndexMapKernel::dispatch_region(gpu::CommandRecorder& recorder, const ElementWindow& in,
                                     const ElementWindow& out, const IndexMap& map) const {
  const std::string& name = name_;
  const bool half = dtype_ == DType::f16;
  int64_t count = 1;
  for (const auto& d : map.dims) count *= d.size;
  IndexMapUniforms u{};
  u.rank = static_cast<uint32_t>(map.dims.size());
  const int64_t out_offset = map.out_base + out.offset;
  u.out_offset = static_cast<uint32_t>(checked_i32(out_offset, name));
  u.in_offset = checked_i32(map.in_base + in.offset, name);
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

  const auto workgroups =
      gpu::split_workgroups((threads + kWorkgroupSize - 1) / kWorkgroupSize, kc_.gpu.limits());
  recorder.dispatch(pipeline(), {in.binding, out.binding}, &u, sizeof(u), workgroups, name);
}

// The shader depends on the dtype's width and the boundary rule only.
const wgpu::ComputePipeline& IndexMapKernel::pipeline() const {
  if (pipeline_) return *pipeline_;
  const TemplateValues values = {
      {"HALF", dtype_ == DType::f16 ? "1" : "0"},
      {"BOUNDARY_CONSTANT", map_.boundary == Boundary::Constant ? "1" : "0"},
      {"BOUNDARY_REFLECT", map_.boundary == Boundary::Reflect ? "1" : "0"},
      {"BOUNDARY_EDGE", map_.boundary == Boundary::Edge ? "1" : "0"},
      {"BOUNDARY_WRAP", map_.boundary == Boundary::Wrap ? "1" : "0"},
  };
  pipeline_ = &shader_pipeline(kc_.pipelines, "layout/index_map.wgsl", values, "layout " + name_);
  return *pipeline_;
}

// Records `box` as one dispatch over windows of the tensors when both its spans fit `capacity`
// elements; otherwise halves the dim that contributes most to the oversized span and records both
// halves the same way.
void IndexMapKernel::record_box(gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output,
                                const IndexMap& box, int64_t capacity) const {
  const KernelContext& kc = kc_;
  const std::string& name = name_;
  const BoxSpans b = box_spans(box);
  const bool out_fits = b.out_last - b.out_first < capacity;
  const bool in_fits = !b.reads || b.in_last - b.in_first < capacity;
  if (out_fits && in_fits) {
    const ElementWindow in = b.reads ? element_window(kc.gpu, input, b.in_first, b.in_last + 1)
                                     : element_window(kc.gpu, input, 0, 1);
    dispatch_region(recorder, in, element_window(kc.gpu, output, b.out_first, b.out_last + 1), box);
    return;
  }
  size_t best = box.dims.size();
  int64_t best_width = 0;
  for (size_t k = 0; k < box.dims.size(); ++k) {
    const IndexMapDim& d = box.dims[k];
    if (d.size == 1) continue;
    const int64_t width = out_fits ? b.in_widths[k] : (d.size - 1) * d.out_stride;
    if (width > best_width) best_width = width, best = k;
  }
  if (best == box.dims.size()) {
    throw gpu::DeviceLimitError(fmt::format("{}: no piece of the copy fits the storage binding limit", name));
  }
  const int64_t half = (box.dims[best].size + 1) / 2;
  IndexMap first = box, second = box;
  first.dims[best].size = half;
  second.dims[best].size = box.dims[best].size - half;
  second.dims[best].start += half * box.dims[best].step;
  second.out_base += half * box.dims[best].out_stride;
  record_box(recorder, input, output, first, capacity);
  record_box(recorder, input, output, second, capacity);
}

IndexMapKernel::IndexMapKernel(const KernelContext& kc, IndexMap map, DType dtype, std::string name)
    : kc_(kc), dtype_(dtype), name_(std::move(name)) {
  int64_t count = 1;
  for (const auto& d : map.dims) count *= d.size;
  empty_ = count == 0;
  if (empty_) return;
  map_ = simplify(std::move(map));
  if (map_.dims.empty()) map_.dims.push_back({1, 1, 0, 1, 1, 0});  // a single element
  if (map_.dims.size() > kMaxRank) {
    throw std::invalid_argument(fmt::format("{}: more than {} dims after coalescing", name_, kMaxRank));
  }
}

void IndexMapKernel::record(gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output) const {
  require_same_dtype(name_, input, output);
  if (input.dtype() != dtype_) {
    throw std::invalid_argument(
        fmt::format("{}: {} tensors, planned for {}", name_, dtype_name(input.dtype()), dtype_name(dtype_)));
  }
  if (empty_) return;
  if (fits_one_binding(kc_.gpu, input) && fits_one_binding(kc_.gpu, output)) {
    dispatch_region(recorder, whole_window(kc_.gpu, input), whole_window(kc_.gpu, output), map_);
    return;
  }
  record_box(recorder, input, output, map_, window_capacity(kc_.gpu, input.dtype()));
}

void record_index_map(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                      const Tensor& output, IndexMap map, const std::string& name) {
  require_same_dtype(name, input, output);
  IndexMapKernel(kc, std::move(map), input.dtype(), name).record(recorder, input, output);
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
