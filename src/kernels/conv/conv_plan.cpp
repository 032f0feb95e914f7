// The path choice (`automatic` or a forced path, checked) and the plan that holds the chosen step.
#include "kernels/conv/conv_plan.h"

#include <fmt/format.h>

#include <atomic>
#include <stdexcept>

#include "kernels/common/binding_window.h"
#include "kernels/conv/conv_step.h"

namespace onda::kernels::conv {
namespace {

std::atomic<int64_t> g_constructed{0};

bool empty_input(const ConvGeometry& g) {
  return g.batch * g.in_channels * g.in_positions() == 0;
}

bool has_diagonal(const ConvOperands& o) {
  return o.diagonal != ConvDiagonal::none;
}

// A group-1 weight larger than one storage binding runs in parts of its output channels.
bool weight_needs_parts(const ConvGeometry& g, const ConvOperands& o) {
  return o.w && g.group == 1 && element_count(g.weight_shape()) > 0 && !o.w_fits_one_binding;
}

bool overlap_add_applies(const ConvGeometry& g) {
  return g.transpose && g.spatial_rank() == 1 && g.group == 1 && g.out_channels == 1 &&
         g.kernel[0] == g.in_channels && g.dilations[0] == 1 && g.in_positions() > 0;
}

// The path `automatic` takes: choose_conv_path, moved off the GEMM where its chunks do not fit and
// onto it where only its windows do, then onto the implicit GEMM where that applies.
ConvPath automatic_path(const detail::StepInputs& in) {
  const ConvGeometry& g = in.g;
  const ConvOperands& o = in.operands;
  const bool weight = g.transpose ? o.w.has_value() : true;
  const auto gemm_fits = [&] {
    return g.transpose ? detail::conv_transpose_gemm_fits(g, o.x, o.y, in.limits)
                       : detail::conv_gemm_fits(g, o.x, o.y, in.limits);
  };
  ConvPath path = choose_conv_path(g, g.transpose && has_diagonal(o));
  if (path == ConvPath::gemm && !gemm_fits()) path = ConvPath::direct;
  // Few channels but one group of one batch over the binding limit: the gemm path windows X and Y.
  if (path == ConvPath::direct && g.group == 1 && !empty_input(g) && weight &&
      !detail::direct_fits(g, o.x, o.y, in.limits) && gemm_fits()) {
    path = ConvPath::gemm;
  }
  // Where im2col + GEMM (or the direct kernel, for few output channels) would run, the implicit GEMM
  // does the same product without a column buffer; a ConvTranspose per stride phase.
  if (path != ConvPath::overlap_add && o.w && automatic_takes_implicit(g) && in.options.allow_implicit &&
      in.kc.tuning.conv.implicit_gemm && detail::conv_implicit_applies(in.kc, g, o.x, *o.w, o.y, in.limits)) {
    path = ConvPath::implicit_gemm;
  }
  return path;
}

// Throws where the (forced or automatic) path cannot run the geometry with these operands.
void check_path(const detail::StepInputs& in, ConvPath path) {
  const ConvGeometry& g = in.g;
  const ConvOperands& o = in.operands;
  switch (path) {
    case ConvPath::implicit_gemm:
      if (!o.w || !detail::conv_implicit_applies(in.kc, g, o.x, *o.w, o.y, in.limits)) {
        throw std::invalid_argument(
            g.transpose
                ? "conv: implicit_gemm ConvTranspose needs the weight tensor, group 1, rank <= 2, dilation "
                  "1, a non-empty input and X, W, Y within one binding"
                : "conv: implicit_gemm needs group 1, rank <= 2, a non-empty input and X, W, Y within one "
                  "binding");
      }
      return;
    case ConvPath::overlap_add:
      if (!g.transpose) throw std::invalid_argument("conv: overlap_add is a ConvTranspose path");
      if (!has_diagonal(o) || !overlap_add_applies(g)) {
        throw std::invalid_argument(
            "conv: overlap_add needs a 1-D [C, 1, C] weight with its diagonal or check_windowed_identity, "
            "group 1, dilation 1");
      }
      return;
    default:
      if (g.transpose && !o.w && !(path == ConvPath::gemm && o.packed)) {
        throw std::invalid_argument("conv: this ConvTranspose path needs the weight tensor");
      }
      if (path == ConvPath::gemm && g.group != 1)
        throw std::invalid_argument("conv: the gemm path needs group 1");
  }
}

std::unique_ptr<const detail::ConvStep> plan_step(const detail::StepInputs& in, ConvPath path) {
  switch (path) {
    case ConvPath::implicit_gemm:
      return detail::plan_implicit(in);
    case ConvPath::overlap_add:
      return detail::plan_overlap_add(in);
    case ConvPath::gemm:
      // An empty input writes the bias only: the direct kernel, bound whole.
      if (empty_input(in.g)) return detail::plan_direct(in, in.g.transpose);
      return in.g.transpose ? detail::plan_conv_transpose_gemm(in) : detail::plan_conv_gemm(in);
    default:
      return detail::plan_direct(in, true);
  }
}

void check_tensor(const Tensor& t, const Shape& shape, const char* what) {
  if (!t.defined()) throw std::invalid_argument(fmt::format("conv: {} missing", what));
  if (!is_float(t.dtype())) {
    throw std::invalid_argument(
        fmt::format("conv: {} must be float32 or float16, got {}", what, dtype_name(t.dtype())));
  }
  if (t.shape() != shape) {
    throw std::invalid_argument(
        fmt::format("conv: {} is {}, expected {}", what, shape_string(t.shape()), shape_string(shape)));
  }
}

// Whether the tensors have the operands' dtypes and forms (w_fits_one_binding aside: a binding fact).
// `weight_left_out`: a weight the plan no longer reads may be missing.
bool matches(const ConvOperands& o, const ConvTensors& t, bool weight_left_out) {
  const auto same = [](bool given, DType dtype, const std::optional<DType>& planned) {
    return given ? planned && *planned == dtype : !planned;
  };
  const ConvTransposeWeights& w = t.weights;
  return t.x.dtype() == o.x && t.y.dtype() == o.y &&
         (weight_left_out || same(w.w.defined(), w.w.dtype(), o.w)) &&
         same(t.bias.defined(), t.bias.dtype(), o.bias) &&
         same(w.packed != nullptr, w.packed ? w.packed->dtype() : DType::f32, o.packed);
}

}  // namespace

namespace detail {

void check_tensors(const ConvGeometry& g, const ConvTensors& t, bool weight_required) {
  Shape x_shape = {g.batch, g.in_channels};
  x_shape.insert(x_shape.end(), g.in_size.begin(), g.in_size.end());
  check_tensor(t.x, x_shape, "input X");
  check_tensor(t.y, g.output_shape(), "output Y");
  if (t.y.dtype() != t.x.dtype()) throw std::invalid_argument("conv: output Y must have the dtype of X");
  if (t.bias.defined()) check_tensor(t.bias, {g.out_channels}, "bias");
  if ((!g.transpose && weight_required) || t.weights.w.defined())
    check_tensor(t.weights.w, g.weight_shape(), "weight W");
}

}  // namespace detail

ConvOperands ConvOperands::of(const KernelContext& kc, const Tensor& x, const ConvTransposeWeights& weights,
                              const Tensor& bias, const Tensor& y) {
  ConvOperands o;
  o.x = x.dtype();
  o.y = y.dtype();
  if (weights.w.defined()) {
    o.w = weights.w.dtype();
    o.w_fits_one_binding = fits_one_binding(kc.gpu, weights.w);  // its binding, alignment included
  }
  if (bias.defined()) o.bias = bias.dtype();
  if (weights.packed) o.packed = weights.packed->dtype();
  if (weights.diagonal_device.defined()) {
    o.diagonal = weights.identity_flag.defined() ? ConvDiagonal::device_checked : ConvDiagonal::device;
  } else if (weights.diagonal) {
    o.diagonal = ConvDiagonal::host;
  } else if (weights.check_windowed_identity && weights.w.defined()) {
    o.diagonal = ConvDiagonal::check_on_gpu;
  }
  return o;
}

ConvPlan::ConvPlan(const KernelContext& kc, const ConvGeometry& geometry, const ConvOperands& operands,
                   const ConvOptions& options)
    : geometry_(geometry), operands_(operands) {
  ++g_constructed;
  const ConvGeometry& g = geometry_;
  if (element_count(g.output_shape()) == 0) return;  // nothing to write
  const detail::ChunkLimits limits = detail::chunk_limits(kc, options);
  const detail::StepInputs in{kc, g, operands_, options, limits};
  if ((!g.transpose || !has_diagonal(operands_)) && weight_needs_parts(g, operands_)) {
    step_ = detail::plan_weight_parts(in);
    return;
  }
  path_ = options.path == ConvPath::automatic ? automatic_path(in) : options.path;
  check_path(in, path_);
  step_ = plan_step(in, path_);
}

ConvPlan::~ConvPlan() = default;
ConvPlan::ConvPlan(ConvPlan&&) noexcept = default;
ConvPlan& ConvPlan::operator=(ConvPlan&&) noexcept = default;

void ConvPlan::record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const ConvTensors& tensors) const {
  const bool weight_left_out = !tensors.weights.w.defined() && !reads_weight();
  detail::check_tensors(geometry_, tensors, !weight_left_out);
  if (!matches(operands_, tensors, weight_left_out))
    throw std::invalid_argument(
        "conv: the tensors are not those the plan was made for (dtypes, weight form)");
  if (!step_) return;
  step_->record(recorder, pool, tensors);
}

bool ConvPlan::reads_weight() const {
  return step_ && step_->reads_weight();
}

int64_t ConvPlan::constructed() {
  return g_constructed.load();
}

}  // namespace onda::kernels::conv
