#include "kernels/elementwise/fused_elementwise.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

#include "kernels/elementwise/elementwise_kernel.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr size_t kMaxRank = 8;
constexpr uint32_t kWorkgroupSize = 256;
constexpr uint32_t kElementsPerThread = 4;
constexpr std::string_view kAttributesToken = "params.scalars";

uint32_t alignment_of_offset(uint32_t offset) {
  return offset % 4 == 0 ? 4 : offset % 2 == 0 ? 2 : 1;
}

size_t vec4s_for(size_t words) {
  return std::max<size_t>(1, (words + 3) / 4);
}

// A constant operand as WGSL, in its compute type.
std::string constant_expression(DType dtype, uint32_t slot) {
  const std::string ct = elementwise_compute_type(dtype);
  const std::string bits = fmt::format("constant_bits({}u)", slot);
  return ct == "u32" ? bits : fmt::format("bitcast<{}>({})", ct, bits);
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Each step's dtype from its operands', as the one-op kernel decides it; throws naming the step
// when an operand refers to nothing (or to a later step) or its dtypes are not accepted.
std::vector<DType> step_dtypes_of(const std::vector<FusedStep>& steps, const std::vector<DType>& input_dtypes,
                                  const std::vector<FusedConstant>& constants) {
  std::vector<DType> result;
  for (size_t j = 0; j < steps.size(); ++j) {
    std::vector<DType> dtypes;
    for (const FusedOperand& operand : steps[j].operands) {
      const size_t limit = operand.source == FusedOperand::Source::input  ? input_dtypes.size()
                           : operand.source == FusedOperand::Source::step ? j
                                                                          : constants.size();
      if (operand.index >= limit)
        throw std::invalid_argument(fmt::format("fused elementwise: step {} reads an operand it cannot", j));
      dtypes.push_back(operand.source == FusedOperand::Source::input  ? input_dtypes[operand.index]
                       : operand.source == FusedOperand::Source::step ? result[operand.index]
                                                                      : constants[operand.index].dtype);
    }
    try {
      result.push_back(elementwise_result_dtype(steps[j].op, dtypes, steps[j].attributes));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("fused elementwise step {}: {}", j, e.what()));
    }
  }
  return result;
}

// Whether a step's expression reads its attributes (LeakyRelu's alpha, Clip's bounds, ...).
bool reads_attributes(const FusedStep& step) {
  const ElementwiseDefinition& d = elementwise_definition(step.op);
  return d.float_expr.find(kAttributesToken) != std::string::npos ||
         d.integer_expr.find(kAttributesToken) != std::string::npos;
}

// How the generated WGSL spells constant k and step j's attributes (a vec4<f32>).
struct Spelling {
  std::function<std::string(uint32_t)> constant;
  std::function<std::string(size_t)> attributes;
};

std::pair<std::string, std::string> render_step_wgsl(const std::vector<FusedStep>& steps,
                                                     const std::vector<DType>& input_dtypes,
                                                     const std::vector<FusedConstant>& constants,
                                                     const std::vector<DType>& step_dtypes,
                                                     const Spelling& spelling) {
  std::string functions, body;
  std::map<std::string, std::string> function_names;  // text after the name -> name
  for (size_t j = 0; j < steps.size(); ++j) {
    const FusedStep& step = steps[j];
    std::vector<DType> dtypes;
    std::vector<std::string> arguments;
    std::string parameters;
    for (size_t k = 0; k < step.operands.size(); ++k) {
      const FusedOperand& operand = step.operands[k];
      switch (operand.source) {
        case FusedOperand::Source::input:
          dtypes.push_back(input_dtypes[operand.index]);
          arguments.push_back(fmt::format("x{}", operand.index));
          break;
        case FusedOperand::Source::step:
          dtypes.push_back(step_dtypes[operand.index]);
          arguments.push_back(fmt::format("v{}", operand.index));
          break;
        case FusedOperand::Source::constant:
          dtypes.push_back(constants[operand.index].dtype);
          arguments.push_back(spelling.constant(operand.index));
          break;
      }
      parameters += fmt::format("{}{}: {}", k ? ", " : "", static_cast<char>('a' + k),
                                elementwise_compute_type(dtypes.back()));
    }
    std::string expression = elementwise_expression(step.op, dtypes, step_dtypes[j]);
    if (expression.find(kAttributesToken) != std::string::npos) {
      expression = replace_all(expression, kAttributesToken, "scalars");
      parameters += ", scalars: vec4<f32>";
      arguments.push_back(spelling.attributes(j));
    }
    const std::string signature = fmt::format("({}) -> {} {{ return {}; }}", parameters,
                                              elementwise_compute_type(step_dtypes[j]), expression);
    auto [named, added] = function_names.emplace(signature, fmt::format("step_{}", function_names.size()));
    if (added) functions += fmt::format("fn {}{}\n", named->second, signature);
    body += fmt::format("  let v{} = {}({});\n", j, named->second, fmt::join(arguments, ", "));
  }
  body += fmt::format("  return v{};", steps.size() - 1);
  return {functions, body};
}

}  // namespace

FusedConstant FusedConstant::of(DType dtype, double value) {
  FusedConstant c;
  c.dtype = dtype;
  if (is_float(dtype)) {
    c.bits = std::bit_cast<uint32_t>(static_cast<float>(value));
  } else if (dtype == DType::i32 || dtype == DType::i64) {
    c.bits = static_cast<uint32_t>(static_cast<int64_t>(value));  // int64 is carried in i32
  } else if (dtype == DType::boolean) {
    c.bits = value != 0 ? 1u : 0u;
  } else {
    c.bits = static_cast<uint32_t>(static_cast<int64_t>(value)) & 255u;
  }
  return c;
}

FusedElementwise::FusedElementwise(const KernelContext& kc, FusedElementwiseProblem problem)
    : kc_(kc), problem_(std::move(problem)) {
  const size_t inputs = problem_.input_dtypes.size();
  if (problem_.steps.empty()) throw std::invalid_argument("fused elementwise: no steps");
  if (inputs == 0 || inputs != problem_.input_shapes.size() || inputs > kMaxFusedInputs) {
    throw std::invalid_argument(
        fmt::format("fused elementwise: {} inputs (1 to {} with a shape each)", inputs, kMaxFusedInputs));
  }
  step_dtypes_ = step_dtypes_of(problem_.steps, problem_.input_dtypes, problem_.constants);
  // An op reading its attributes takes three constant words after the given constants.
  uint32_t next_slot = static_cast<uint32_t>(problem_.constants.size());
  for (const FusedConstant& c : problem_.constants) constant_words_.push_back(c.bits);
  for (const FusedStep& step : problem_.steps) {
    attribute_slots_.push_back(reads_attributes(step) ? next_slot : 0);
    if (!reads_attributes(step)) continue;
    next_slot += 3;
    for (float v : {step.attributes.alpha, step.attributes.beta, step.attributes.gamma})
      constant_words_.push_back(std::bit_cast<uint32_t>(v));
  }
  count_ = element_count(problem_.output_shape);
  std::tie(step_functions_, fused_body_) = render_steps();
  if (count_ == 0) return;
  if (count_ > int64_t{0xFFFFFFFF} - 4)
    throw std::invalid_argument("fused elementwise: more than 2^32 elements");
  if (!problem_.pair_rotated.empty()) {
    if (problem_.pair_rotated.size() != inputs)
      throw std::invalid_argument("fused elementwise: pair_rotated needs one flag per input");
    for (size_t k = 0; k < inputs; ++k) {
      if (!problem_.pair_rotated[k]) continue;
      const Shape& shape = problem_.input_shapes[k];
      if (shape != problem_.output_shape || shape.empty() || shape.back() % 2 != 0 ||
          !is_float(problem_.input_dtypes[k])) {
        throw std::invalid_argument(fmt::format(
            "fused elementwise: input {} ({} {}) is read with its pairs rotated, which needs a float input of the "
            "output's shape {} with an even last dim",
            k, dtype_name(problem_.input_dtypes[k]), shape_string(shape), shape_string(problem_.output_shape)));
      }
    }
  }
  const auto& views = problem_.view_strides;
  if (!views.empty()) {
    if (views.size() != inputs || problem_.view_sources.size() != inputs || problem_.view_offsets.size() != inputs)
      throw std::invalid_argument("fused elementwise: views need a source, strides and an offset per input");
    for (size_t k = 0; k < inputs; ++k) {
      if (views[k].empty()) continue;
      const Shape& shape = problem_.input_shapes[k];
      // Every element of the view inside its source (the kernel reads without bounds checks).
      int64_t last = problem_.view_offsets[k];
      bool valid = views[k].size() == shape.size() && last >= 0 && !rotated(k);
      for (size_t d = 0; valid && d < shape.size(); ++d) {
        valid = views[k][d] >= 0;
        last += shape[d] > 0 ? (shape[d] - 1) * views[k][d] : 0;
      }
      if (!valid || (element_count(shape) > 0 && last >= element_count(problem_.view_sources[k]))) {
        throw std::invalid_argument(fmt::format("fused elementwise: input {} is no view of {} ({} from offset {})", k,
                                                shape_string(problem_.view_sources[k]), shape_string(shape),
                                                problem_.view_offsets[k]));
      }
    }
  }
  layout_ = plan_broadcast(problem_.input_shapes, problem_.output_shape, views);
  if (layout_.out_dims.size() > kMaxRank)
    throw std::invalid_argument("fused elementwise: more than 8 broadcast dims");
}

std::pair<std::string, std::string> FusedElementwise::render_steps() const {
  const Spelling uniform_words{
      [&](uint32_t k) { return constant_expression(problem_.constants[k].dtype, k); },
      [&](size_t j) { return fmt::format("attributes_at({}u)", attribute_slots_[j]); }};
  return render_step_wgsl(problem_.steps, problem_.input_dtypes, problem_.constants, step_dtypes_,
                          uniform_words);
}

void FusedElementwise::check_tensors(std::span<const Tensor> inputs, const Tensor& output) const {
  bool inputs_match = inputs.size() == problem_.input_shapes.size();
  for (size_t k = 0; inputs_match && k < inputs.size(); ++k) {
    const Shape& expected = is_view(k) ? problem_.view_sources[k] : problem_.input_shapes[k];
    inputs_match = inputs[k].shape() == expected && inputs[k].dtype() == problem_.input_dtypes[k];
  }
  if (!inputs_match) throw std::invalid_argument("fused elementwise: inputs differ from the planned problem");
  if (output.dtype() != output_dtype() || output.shape() != output_shape()) {
    throw std::invalid_argument(fmt::format("fused elementwise: output must be {} {}, got {} {}",
                                            dtype_name(output_dtype()), shape_string(output_shape()),
                                            dtype_name(output.dtype()), shape_string(output.shape())));
  }
}

std::string FusedElementwise::render_wgsl(const Alignment& alignment) const {
  const size_t inputs = problem_.input_dtypes.size();
  std::string input_functions, parameters, loads;
  std::array<std::string, 4> lanes;
  for (size_t k = 0; k < inputs; ++k) {
    const DType dtype = problem_.input_dtypes[k];
    input_functions += render_elementwise_input(k, dtype, layout_.modes[k], alignment.in_alignment[k]);
    parameters += fmt::format("{}x{}: {}", k ? ", " : "", k, elementwise_compute_type(dtype));
    if (rotated(k)) {  // i is a multiple of 4: both pairs of the vec4 are whole
      loads += fmt::format("  let in{0}_loaded = load4_in{0}(i);\n", k);
      loads += fmt::format("  let in{0} = vec4<f32>(-in{0}_loaded.y, in{0}_loaded.x, -in{0}_loaded.w, in{0}_loaded.z);\n", k);
    } else {
      loads += fmt::format("  let in{0} = load4_in{0}(i);\n", k);
    }
    for (size_t lane = 0; lane < 4; ++lane)
      lanes[lane] += fmt::format("{}in{}.{}", k ? ", " : "", k, "xyzw"[lane]);
  }
  const std::string out_ct = elementwise_compute_type(output_dtype());
  const bool out_f16 = output_dtype() == DType::f16;
  const TemplateValues values = {
      {"INPUTS", std::to_string(inputs)},
      {"OFFSET_VEC4S", std::to_string(vec4s_for(inputs))},
      {"CONSTANT_VEC4S", std::to_string(vec4s_for(constant_words_.size()))},
      {"PARAMS_BINDING", std::to_string(inputs + 1)},
      {"OUT_BINDING", std::to_string(inputs)},
      {"INPUT_FUNCTIONS", input_functions},
      {"OP_FUNCTIONS", std::string(shader_text("elementwise/math.wgsl"))},
      {"STEP_FUNCTIONS", step_functions_},
      {"FUSED_PARAMETERS", parameters},
      {"FUSED_BODY", fused_body_},
      {"LOADS", loads},
      {"LANE_X", lanes[0]},
      {"LANE_Y", lanes[1]},
      {"LANE_Z", lanes[2]},
      {"LANE_W", lanes[3]},
      {"OUT_CT", out_ct},
      {"OUT_STORAGE", out_f16              ? "u32"
                      : alignment.out_vec4 ? fmt::format("vec4<{}>", out_ct)
                                           : out_ct},
      {"OUT_VEC4", alignment.out_vec4 ? "1" : "0"},
      {"OUT_F16", out_f16 ? "1" : "0"},
  };
  return render_shader("elementwise/fused_elementwise.wgsl", values);
}

const wgpu::ComputePipeline& FusedElementwise::pipeline_for(const Alignment& alignment) const {
  for (const auto& [known, pipeline] : pipelines_) {
    if (known == alignment) return *pipeline;
  }
  // The shader depends on the steps (their functions and body), the dtypes, each input's access
  // mode and alignment, and the number of constant words; not on the shapes or constant values.
  gpu::PipelineKey key{"elementwise/fused_elementwise.wgsl",
                       {{"steps", step_functions_ + fused_body_},
                        {"constants", std::to_string(vec4s_for(constant_words_.size()))}}};
  key.values["out"] = std::string(alignment.out_vec4 ? "v" : "s") + std::string(dtype_name(output_dtype()));
  for (size_t k = 0; k < problem_.input_dtypes.size(); ++k) {
    std::string mode(dtype_name(problem_.input_dtypes[k]));
    mode += static_cast<char>('0' + static_cast<int>(layout_.modes[k]));
    mode += static_cast<char>('0' + alignment.in_alignment[k]);
    if (rotated(k)) mode += 'r';
    key.values["in" + std::to_string(k)] = std::move(mode);
  }
  const auto& pipeline = kc_.pipelines.get(
      key, [&] { return render_wgsl(alignment); }, "fused elementwise");
  pipelines_.emplace_back(alignment, &pipeline);
  return pipeline;
}

// Input k's first element in its buffer (a view's, past its source's start).
uint32_t FusedElementwise::input_offset(std::span<const Tensor> inputs, size_t k) const {
  const int64_t offset = inputs[k].element_offset(kc_.gpu) + (is_view(k) ? problem_.view_offsets[k] : 0);
  if (offset > int64_t{0xFFFFFFFF}) throw std::invalid_argument("fused elementwise: an input offset past 2^32");
  return static_cast<uint32_t>(offset);
}

// The words of `Params` in fused_elementwise.wgsl.
std::vector<uint32_t> FusedElementwise::uniforms(std::span<const Tensor> inputs, uint32_t out_offset) const {
  const size_t n = inputs.size();
  std::vector<uint32_t> words = {static_cast<uint32_t>(count_),
                                 static_cast<uint32_t>(layout_.out_dims.size()), out_offset, 0};
  words.resize(4 + kMaxRank, 0);
  for (size_t d = 0; d < layout_.out_dims.size(); ++d)
    words[4 + d] = static_cast<uint32_t>(layout_.out_dims[d]);
  const size_t offsets_at = words.size();
  words.resize(offsets_at + 4 * vec4s_for(n), 0);
  for (size_t k = 0; k < n; ++k) words[offsets_at + k] = input_offset(inputs, k);
  const size_t strides_at = words.size();
  words.resize(strides_at + kMaxRank * n, 0);
  for (size_t k = 0; k < n; ++k)
    for (size_t d = 0; d < layout_.strides[k].size(); ++d)
      words[strides_at + kMaxRank * k + d] = static_cast<uint32_t>(layout_.strides[k][d]);
  const size_t constants_at = words.size();
  words.resize(constants_at + 4 * vec4s_for(constant_words_.size()), 0);
  std::copy(constant_words_.begin(), constant_words_.end(),
            words.begin() + static_cast<ptrdiff_t>(constants_at));
  return words;
}

void FusedElementwise::record(gpu::CommandRecorder& recorder, std::span<const Tensor> inputs,
                              const Tensor& output) const {
  check_tensors(inputs, output);
  if (count_ == 0) return;
  const uint32_t out_offset = output.element_offset(kc_.gpu);
  if (output_dtype() == DType::f16 && out_offset % 2 != 0)
    throw std::invalid_argument("fused elementwise: float16 output must start at an even element");
  Alignment alignment;
  alignment.out_vec4 = output_dtype() != DType::f16 && out_offset % 4 == 0 && count_ % 4 == 0;
  for (size_t k = 0; k < inputs.size(); ++k)
    alignment.in_alignment[k] = alignment_of_offset(input_offset(inputs, k));
  const std::vector<uint32_t> words = uniforms(inputs, out_offset);
  const auto& pipeline = pipeline_for(alignment);

  std::vector<gpu::BufferBinding> bindings;
  for (const auto& t : inputs) bindings.push_back(t.binding(kc_.gpu));
  bindings.push_back(output.binding(kc_.gpu));
  const uint64_t threads = (static_cast<uint64_t>(count_) + kElementsPerThread - 1) / kElementsPerThread;
  const auto workgroups =
      gpu::split_workgroups((threads + kWorkgroupSize - 1) / kWorkgroupSize, kc_.gpu.limits());
  recorder.dispatch(pipeline, bindings, words.data(), words.size() * sizeof(uint32_t), workgroups,
                    "FusedElementwise");
}

std::string render_epilogue(const FusedEpilogue& epilogue, DType value, std::string_view name) {
  const std::string parameters = epilogue.residual ? "x0: f32, x1: f32" : "x0: f32";
  if (epilogue.steps.empty()) {
    if (epilogue.residual) throw std::invalid_argument("fused epilogue: a residual without steps");
    return fmt::format("fn {}({}) -> f32 {{ return x0; }}\n", name, parameters);
  }
  if (!is_float(value)) throw std::invalid_argument("fused epilogue: the value must be float");
  std::vector<DType> input_dtypes = {value};
  if (epilogue.residual) input_dtypes.push_back(value);
  const std::vector<DType> step_dtypes = step_dtypes_of(epilogue.steps, input_dtypes, epilogue.constants);
  if (step_dtypes.back() != value)
    throw std::invalid_argument("fused epilogue: the result must have the value's type");
  // Literals: a constant expression must be finite in WGSL.
  auto literal = [](uint32_t bits, DType dtype) {
    if (is_float(dtype) && !std::isfinite(std::bit_cast<float>(bits)))
      throw std::invalid_argument("fused epilogue: a constant is not finite");
    const std::string ct = elementwise_compute_type(dtype);
    return ct == "u32" ? fmt::format("{}u", bits) : fmt::format("bitcast<{}>({}u)", ct, bits);
  };
  const Spelling literals{
      [&](uint32_t k) { return literal(epilogue.constants[k].bits, epilogue.constants[k].dtype); },
      [&](size_t j) {
        const ElementwiseAttributes& a = epilogue.steps[j].attributes;
        return fmt::format("vec4<f32>({}, {}, {}, 0.0)",
                           literal(std::bit_cast<uint32_t>(a.alpha), DType::f32),
                           literal(std::bit_cast<uint32_t>(a.beta), DType::f32),
                           literal(std::bit_cast<uint32_t>(a.gamma), DType::f32));
      }};
  const auto [functions, body] =
      render_step_wgsl(epilogue.steps, input_dtypes, epilogue.constants, step_dtypes, literals);
  return fmt::format("{}\n{}\nfn {}({}) -> f32 {{\n{}\n}}\n", shader_text("elementwise/math.wgsl"),
                     functions, name, parameters, body);
}

}  // namespace onda::kernels
