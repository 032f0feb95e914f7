#include "kernels/norm/normalize_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr int64_t kThreads = 256;
constexpr int64_t kPerThread = 16;  // fused path: rows up to 4096 elements in a workgroup of 256
// Where the device allows workgroups of 1024, the fused path takes rows up to 1024 x 32 elements (an
// MP-SENet InstanceNorm row is 321 x 101): one dispatch and one read instead of the long-row path's two.
constexpr int64_t kWideThreads = 1024;
constexpr int64_t kWidePerThread = 32;
constexpr int64_t kBatch = kThreads * 16;  // partial-stats pass: elements per batch of loads (BATCH)
constexpr int64_t kMaxChunks = 256;        // a row's chunks merge one per invocation (norm_apply.wgsl)
constexpr int64_t kApplyPerThread = 8;     // apply pass: elements per invocation

// Mirrors NormParams in norm_common.wgsl.
struct NormUniforms {
  uint32_t rows, row_size, chunk_size, chunks;
  uint32_t x_offset, y_offset, scale_offset, bias_offset;
  uint32_t row_mod, row_mul, k_div, k_mod;
  float epsilon;
  uint32_t slope_offset;
  uint32_t blocks;
  uint32_t pad;
};

std::string flag(bool on) {
  return std::string(on ? "1" : "0");
}

uint32_t u32(int64_t v, const char* what) {
  if (v < 0 || v > 0xFFFFFFFFll)
    throw std::invalid_argument(fmt::format("normalize: {} = {} out of range", what, v));
  return static_cast<uint32_t>(v);
}

bool wide_workgroups(const wgpu::Limits& limits) {
  return limits.maxComputeInvocationsPerWorkgroup >= kWideThreads &&
         limits.maxComputeWorkgroupSizeX >= kWideThreads;
}

}  // namespace

int64_t fused_row_capacity(const wgpu::Limits& limits) {
  return wide_workgroups(limits) ? kWideThreads * kWidePerThread : kThreads * kPerThread;
}

NormalizeSpec layer_norm_spec(const Shape& shape, int64_t axis, float epsilon) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    throw std::invalid_argument("LayerNormalization: axis out of range");
  NormalizeSpec s;
  s.rows = element_count(Shape(shape.begin(), shape.begin() + axis));
  s.row_size = element_count(Shape(shape.begin() + axis, shape.end()));
  s.k_mod = s.row_size;
  s.epsilon = epsilon;
  return s;
}

NormalizeSpec instance_norm_spec(const Shape& shape, float epsilon) {
  if (shape.size() < 2) throw std::invalid_argument("InstanceNormalization: input needs rank >= 2");
  NormalizeSpec s;
  s.rows = shape[0] * shape[1];
  s.row_size = element_count(Shape(shape.begin() + 2, shape.end()));
  s.row_mod = shape[1];
  s.row_mul = 1;
  s.k_div = std::max<int64_t>(s.row_size, 1);
  s.epsilon = epsilon;
  return s;
}

NormalizeSpec group_norm_spec(const Shape& shape, int64_t num_groups, bool per_channel_affine,
                              float epsilon) {
  if (shape.size() < 2) throw std::invalid_argument("GroupNormalization: input needs rank >= 2");
  const int64_t channels = shape[1];
  if (num_groups <= 0 || channels % num_groups != 0) {
    throw std::invalid_argument(
        fmt::format("GroupNormalization: {} channels not divisible into {} groups", channels, num_groups));
  }
  const int64_t spatial = element_count(Shape(shape.begin() + 2, shape.end()));
  NormalizeSpec s;
  s.rows = shape[0] * num_groups;
  s.row_size = channels / num_groups * spatial;
  s.row_mod = num_groups;
  if (per_channel_affine) {
    s.row_mul = channels / num_groups;
    s.k_div = std::max<int64_t>(spatial, 1);
    s.k_mod = channels / num_groups;
  } else {
    s.row_mul = 1;
    s.k_div = std::max<int64_t>(s.row_size, 1);
  }
  s.epsilon = epsilon;
  return s;
}

namespace {

// Bindings of the apply/fused kernels: x, [stats], [scale], [bias], [slope], y, params; the template
// values from `first_binding` on.
void affine_values(const NormalizeProblem& p, int first_binding, TemplateValues& v) {
  int b = first_binding;
  v["HAS_SCALE"] = flag(p.scale.defined);
  v["HAS_BIAS"] = flag(p.bias.defined);
  v["HAS_SLOPE"] = flag(p.slope.defined);
  v["SCALE_ACCESS"] = p.scale.defined ? tensor_access("scale", b++, p.scale.dtype, false) : std::string();
  v["BIAS_ACCESS"] = p.bias.defined ? tensor_access("bias", b++, p.bias.dtype, false) : std::string();
  v["SLOPE_ACCESS"] = p.slope.defined ? tensor_access("slope", b++, p.slope.dtype, false) : std::string();
  v["Y_ACCESS"] = tensor_access("y", b, p.dtype, true);
  v["PARAMS_BINDING"] = std::to_string(b + 1);
}

void bind_affine_and_output(const KernelContext& kc, const Tensor& scale, const Tensor& bias, const Tensor& slope,
                            const Tensor& y, std::vector<gpu::BufferBinding>& bindings) {
  if (scale.defined()) bindings.push_back(scale.binding(kc.gpu));
  if (bias.defined()) bindings.push_back(bias.binding(kc.gpu));
  if (slope.defined()) bindings.push_back(slope.binding(kc.gpu));
  bindings.push_back(y.binding(kc.gpu));
}

}  // namespace

// The path and its pipelines: rows that fit one workgroup's registers in one fused dispatch (one
// read, about 4 values per invocation: rows of up to 1024 share a workgroup), longer rows as partial
// statistics per chunk, then the output, each workgroup merging its row's chunks (two reads).
struct Normalize::Pipelines {
  NormUniforms uniforms{};  // but the offsets
  bool fused = false;
  int64_t fused_groups = 0;
  const wgpu::ComputePipeline* fused_rows = nullptr;
  const wgpu::ComputePipeline *stats = nullptr, *apply = nullptr;
};


Normalize::Normalize(const KernelContext& kc, NormalizeProblem problem)
    : kc_(kc), problem_(std::move(problem)) {
  const NormalizeSpec& spec = problem_.spec;
  const int64_t count = element_count(problem_.shape);
  if (count != spec.rows * spec.row_size) {
    throw std::invalid_argument(fmt::format("normalize: input {} does not match {} rows of {}",
                                            shape_string(problem_.shape), spec.rows, spec.row_size));
  }
  const int64_t affine_size = (spec.row_mod - 1) * spec.row_mul + spec.k_mod;
  for (const NormalizeAffine* p : {&problem_.scale, &problem_.bias, &problem_.slope}) {
    if (p->defined && p->numel != affine_size) {
      throw std::invalid_argument(
          fmt::format("normalize: scale/bias has {} elements, expected {}", p->numel, affine_size));
    }
  }
  if (problem_.epilogue.residual)
    throw std::invalid_argument("normalize: an epilogue with a residual input is not supported");
  if (count == 0) return;
  auto pipelines = std::make_unique<Pipelines>();
  NormUniforms& u = pipelines->uniforms;
  u.rows = u32(spec.rows, "rows");
  u.row_size = u32(spec.row_size, "row_size");
  // Chunks of whole batches, at most kMaxChunks a row (a 4M-element row: 256 chunks of 4 batches).
  const int64_t batches = (spec.row_size + kBatch - 1) / kBatch;
  const int64_t chunk_batches = (batches + kMaxChunks - 1) / kMaxChunks;
  u.chunk_size = u32(chunk_batches * kBatch, "chunk_size");
  u.chunks = u32((batches + chunk_batches - 1) / chunk_batches, "chunks");
  u.blocks = u32((spec.row_size + kThreads * kApplyPerThread - 1) / (kThreads * kApplyPerThread), "blocks");
  u.row_mod = u32(spec.row_mod, "row_mod");
  u.row_mul = u32(spec.row_mul, "row_mul");
  u.k_div = u32(spec.k_div, "k_div");
  u.k_mod = u32(spec.k_mod, "k_mod");
  u.epsilon = spec.epsilon;
  const std::string x_access = tensor_access("x", 0, problem_.dtype, false);
  const std::string epilogue = render_epilogue(problem_.epilogue, problem_.dtype);
  const int64_t workgroup =
      spec.row_size > kThreads * kPerThread && wide_workgroups(kc.gpu.limits()) ? kWideThreads : kThreads;
  pipelines->fused = spec.row_size <= fused_row_capacity(kc.gpu.limits());
  // norm_common.wgsl's affine_at without a walk where the spec allows
  const TemplateValues affine_forms = {
      {"AFFINE_ROW", flag(spec.k_mod == 1)},
      {"AFFINE_K", flag(spec.row_mul == 0 && spec.k_div == 1 && spec.k_mod >= spec.row_size)},
      {"L2", flag(spec.l2)}};
  if (pipelines->fused) {
    int64_t row_threads = 8;
    while (row_threads < workgroup && row_threads * 4 < spec.row_size) row_threads *= 2;
    const int64_t per_thread = (spec.row_size + row_threads - 1) / row_threads;
    const int64_t rows_per_group = workgroup / row_threads;
    TemplateValues v = affine_forms;
    v.insert({{"X_ACCESS", x_access},
              {"WORKGROUP", std::to_string(workgroup)},
              {"PER_THREAD", std::to_string(per_thread)},
              {"ROW_THREADS", std::to_string(row_threads)},
              {"EPILOGUE", epilogue}});
    affine_values(problem_, 1, v);
    pipelines->fused_rows = &shader_pipeline(kc.pipelines, "norm/norm_rows_fused.wgsl", v, "normalize rows");
    pipelines->fused_groups = (spec.rows + rows_per_group - 1) / rows_per_group;
  } else {
    pipelines->stats = &shader_pipeline(kc.pipelines, "norm/norm_partial_stats.wgsl",
                                        {{"X_ACCESS", x_access}}, "normalize stats");
    TemplateValues v = affine_forms;
    v.insert({{"X_ACCESS", x_access},
              {"PER_THREAD", std::to_string(kApplyPerThread)},
              {"EPILOGUE", epilogue}});
    affine_values(problem_, 2, v);
    pipelines->apply = &shader_pipeline(kc.pipelines, "norm/norm_apply.wgsl", v, "normalize apply");
  }
  pipelines_ = std::move(pipelines);
}

Normalize::~Normalize() = default;
Normalize::Normalize(Normalize&&) noexcept = default;

void Normalize::check_tensors(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& y,
                              const Tensor& slope) const {
  if (x.shape() != problem_.shape || x.dtype() != problem_.dtype || y.shape() != x.shape() ||
      y.dtype() != x.dtype()) {
    throw std::invalid_argument(fmt::format("normalize: input {} / output {} do not match {} rows of {}",
                                            shape_string(x.shape()), shape_string(y.shape()),
                                            problem_.spec.rows, problem_.spec.row_size));
  }
  if (NormalizeAffine::of(scale) != problem_.scale || NormalizeAffine::of(bias) != problem_.bias ||
      NormalizeAffine::of(slope) != problem_.slope) {
    throw std::invalid_argument("normalize: scale/bias/slope differ from the plan");
  }
}

const Normalize& Normalize::slice_plan(const NormalizeProblem& slice) const {
  for (const auto& plan : slice_plans_) {
    if (plan->problem() == slice) return *plan;
  }
  slice_plans_.push_back(std::make_unique<Normalize>(kc_, slice));
  return *slice_plans_.back();
}

// Rows are normalized independently, so an input larger than one storage binding runs as slices of
// whole rows, each a view of x and y. A slice stays within one period of the affine index
// (r % row_mod), so that its scale, bias and slope are a view too, starting at the slice's first index.
void Normalize::record_in_row_slices(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x,
                                     const Tensor& scale, const Tensor& bias, const Tensor& y,
                                     const Tensor& slope) const {
  const NormalizeSpec& spec = problem_.spec;
  const int64_t per_slice = window_capacity(kc_.gpu, x.dtype()) / spec.row_size;
  if (per_slice < 1) {
    throw gpu::DeviceLimitError(
        fmt::format("normalize: one row of {} elements exceeds the storage binding limit of {} bytes",
                    spec.row_size, kc_.gpu.limits().maxStorageBufferBindingSize));
  }
  const bool per_row_affine = spec.row_mul > 0 && spec.row_mod > 1;
  const Tensor x_rows = x.reshape({spec.rows, spec.row_size}), y_rows = y.reshape({spec.rows, spec.row_size});
  for (int64_t r0 = 0; r0 < spec.rows;) {
    int64_t r1 = std::min(spec.rows, r0 + per_slice);
    if (per_row_affine) r1 = std::min(r1, (r0 / spec.row_mod + 1) * spec.row_mod);
    NormalizeSpec part = spec;
    part.rows = r1 - r0;
    part.row_mod = per_row_affine ? r1 - r0 : 1;
    const int64_t first = per_row_affine ? (r0 % spec.row_mod) * spec.row_mul : 0;
    const int64_t count = (part.row_mod - 1) * part.row_mul + part.k_mod;
    const bool odd_half = x.dtype() == DType::f16 && (first % 2 != 0 || (r0 * spec.row_size) % 2 != 0);
    if (odd_half) {
      throw gpu::DeviceLimitError(
          "normalize: a float16 input larger than one storage binding whose row slices "
          "start at odd elements");
    }
    auto affine = [&](const Tensor& t) {
      return t.defined() ? t.reshape({t.numel()}).slice_outer(first, first + count) : t;
    };
    const Tensor x_slice = x_rows.slice_outer(r0, r1), scale_slice = affine(scale), bias_slice = affine(bias),
                 slope_slice = affine(slope);
    const NormalizeProblem slice{x_slice.shape(),
                                 problem_.dtype,
                                 part,
                                 NormalizeAffine::of(scale_slice),
                                 NormalizeAffine::of(bias_slice),
                                 problem_.epilogue,
                                 NormalizeAffine::of(slope_slice)};
    slice_plan(slice).record(recorder, pool, x_slice, scale_slice, bias_slice, y_rows.slice_outer(r0, r1),
                             slope_slice);
    r0 = r1;
  }
}

void Normalize::record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x,
                       const Tensor& scale, const Tensor& bias, const Tensor& y, const Tensor& slope) const {
  check_tensors(x, scale, bias, y, slope);
  if (!pipelines_) return;  // empty
  if (!fits_one_binding(kc_.gpu, x) || !fits_one_binding(kc_.gpu, y)) {
    record_in_row_slices(recorder, pool, x, scale, bias, y, slope);
    return;
  }
  const Pipelines& p = *pipelines_;
  NormUniforms u = p.uniforms;
  u.x_offset = x.element_offset(kc_.gpu);
  u.y_offset = y.element_offset(kc_.gpu);
  u.scale_offset = scale.defined() ? scale.element_offset(kc_.gpu) : 0;
  u.bias_offset = bias.defined() ? bias.element_offset(kc_.gpu) : 0;
  u.slope_offset = slope.defined() ? slope.element_offset(kc_.gpu) : 0;
  const NormalizeSpec& spec = problem_.spec;
  if (p.fused) {
    std::vector<gpu::BufferBinding> bindings = {x.binding(kc_.gpu)};
    bind_affine_and_output(kc_, scale, bias, slope, y, bindings);
    recorder.dispatch(*p.fused_rows, bindings, &u, sizeof(u),
                      gpu::split_workgroups(p.fused_groups, kc_.gpu.limits()), "normalize");
    return;
  }
  const Tensor partials = Tensor::empty(pool, DType::f32, {spec.rows * u.chunks, 4});
  recorder.dispatch(*p.stats, {x.binding(kc_.gpu), partials.binding(kc_.gpu)}, &u, sizeof(u),
                    gpu::split_workgroups(spec.rows * u.chunks, kc_.gpu.limits()), "normalize stats");
  std::vector<gpu::BufferBinding> bindings = {x.binding(kc_.gpu), partials.binding(kc_.gpu)};
  bind_affine_and_output(kc_, scale, bias, slope, y, bindings);
  recorder.dispatch(*p.apply, bindings, &u, sizeof(u),
                    gpu::split_workgroups(spec.rows * u.blocks, kc_.gpu.limits()), "normalize apply");
}

void record_normalize(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& y,
                      const NormalizeSpec& spec) {
  if (x.numel() != spec.rows * spec.row_size || y.shape() != x.shape() || y.dtype() != x.dtype()) {
    throw std::invalid_argument(fmt::format("normalize: input {} / output {} do not match {} rows of {}",
                                            shape_string(x.shape()), shape_string(y.shape()), spec.rows,
                                            spec.row_size));
  }
  const Normalize plan(
      kc, {x.shape(), x.dtype(), spec, NormalizeAffine::of(scale), NormalizeAffine::of(bias), {}, {}});
  plan.record(recorder, pool, x, scale, bias, y);
}

}  // namespace onda::kernels
