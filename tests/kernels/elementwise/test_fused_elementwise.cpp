// The fused elementwise kernel against a float64 interpreter of the same steps: the chains exporters
// write (GELU, RMSNorm's tail, rotary embeddings, gates), random DAGs over 1-7 broadcasting inputs
// with scalar constants and attributes, integer and bool steps (Compare -> Where, Cast), float16,
// views with element offsets; outputs poisoned before each run. Malformed problems throw.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/elementwise/fused_elementwise.h"

namespace onda::test {
namespace {

using kernels::ElementwiseOp;
using kernels::FusedConstant;
using kernels::FusedElementwise;
using kernels::FusedElementwiseProblem;
using kernels::FusedOperand;
using kernels::FusedStep;
using Op = ElementwiseOp;

// One step of the float64 reference.
double reference_step(const FusedStep& step, double a, double b, double c) {
  const double alpha = step.attributes.alpha, beta = step.attributes.beta;
  switch (step.op) {
    case Op::Add:
      return a + b;
    case Op::Sub:
      return a - b;
    case Op::Mul:
      return a * b;
    case Op::Div:
      return a / b;
    case Op::Min:
      return std::min(a, b);
    case Op::Max:
      return std::max(a, b);
    case Op::Pow:
      return std::pow(a, b);
    case Op::Erf:
      return std::erf(a);
    case Op::Tanh:
      return std::tanh(a);
    case Op::Sigmoid:
      return 1 / (1 + std::exp(-a));
    case Op::Sqrt:
      return std::sqrt(a);
    case Op::Exp:
      return std::exp(a);
    case Op::Abs:
      return std::abs(a);
    case Op::Neg:
      return -a;
    case Op::Relu:
      return std::max(a, 0.0);
    case Op::Identity:
      return a;
    case Op::LeakyRelu:
      return a >= 0 ? a : alpha * a;
    case Op::Clip:
      return std::min(std::max(a, alpha), beta);
    case Op::Cos:
      return std::cos(a);
    case Op::Sin:
      return std::sin(a);
    case Op::Greater:
      return a > b ? 1 : 0;
    case Op::Less:
      return a < b ? 1 : 0;
    case Op::Where:
      return a != 0 ? b : c;
    case Op::Cast: {
      const DType to = step.attributes.to;
      if (to == DType::boolean) return a != 0 ? 1 : 0;
      if (to == DType::i32 || to == DType::i64) return std::trunc(a);
      return a;
    }
    default:
      ADD_FAILURE() << "no reference for " << kernels::elementwise_op_name(step.op);
      return 0;
  }
}

// Integer steps of the reference truncate as int32 division does (the only integer ops used here
// are Add, Sub, Mul, Div, Max, Min: exact in double for the small values drawn).
double reference_integer_step(const FusedStep& step, double a, double b, double c) {
  if (step.op == Op::Div) return std::trunc(a / b);
  return reference_step(step, a, b, c);
}

// The value of each input per output element, then the steps, in float64.
std::vector<double> reference(const FusedElementwiseProblem& p,
                              const std::vector<std::vector<double>>& inputs,
                              const std::vector<double>& constants, const std::vector<DType>& step_dtypes) {
  const int64_t n = element_count(p.output_shape);
  const size_t rank = p.output_shape.size();
  std::vector<double> out(static_cast<size_t>(n));
  std::vector<double> x(inputs.size()), v(p.steps.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Shape& s = p.input_shapes[k];
      int64_t rest = i, index = 0, stride = 1;
      for (size_t d = rank; d-- > 0;) {
        const int64_t coordinate = rest % p.output_shape[d];
        rest /= p.output_shape[d];
        const int64_t kd = static_cast<int64_t>(d) - static_cast<int64_t>(rank - s.size());
        if (kd < 0) continue;
        if (s[kd] != 1) index += coordinate * stride;
        stride *= s[kd];
      }
      x[k] = inputs[k][static_cast<size_t>(index)];
    }
    for (size_t j = 0; j < p.steps.size(); ++j) {
      double args[3] = {0, 0, 0};
      DType first = DType::f32;
      for (size_t o = 0; o < p.steps[j].operands.size(); ++o) {
        const FusedOperand& operand = p.steps[j].operands[o];
        const bool from_input = operand.source == FusedOperand::Source::input;
        const bool from_step = operand.source == FusedOperand::Source::step;
        args[o] = from_input ? x[operand.index] : from_step ? v[operand.index] : constants[operand.index];
        const DType dtype = from_input  ? p.input_dtypes[operand.index]
                            : from_step ? step_dtypes[operand.index]
                                        : p.constants[operand.index].dtype;
        if (o == 0) first = dtype;
      }
      const bool integer = first == DType::i32 || first == DType::i64;
      v[j] = integer ? reference_integer_step(p.steps[j], args[0], args[1], args[2])
                     : reference_step(p.steps[j], args[0], args[1], args[2]);
    }
    out[static_cast<size_t>(i)] = v.back();
  }
  return out;
}

struct FusedCase {
  FusedElementwiseProblem problem;
  std::vector<std::vector<double>> inputs;  // values as the GPU holds them
  std::vector<double> constants;
  std::vector<DType> step_dtypes;  // for the reference's integer steps
};

FusedCase make_case(std::vector<Shape> shapes, std::vector<DType> dtypes,
               std::vector<std::pair<DType, double>> constants, std::vector<FusedStep> steps,
               std::vector<DType> step_dtypes, Random& rng,
               std::function<std::vector<double>(size_t input, size_t n)> draw = {}) {
  FusedCase c;
  c.problem.input_shapes = shapes;
  c.problem.input_dtypes = dtypes;
  for (const auto& [dtype, value] : constants) {
    c.problem.constants.push_back(FusedConstant::of(dtype, value));
    c.constants.push_back(is_float(dtype) ? static_cast<float>(value) : value);
  }
  c.problem.steps = std::move(steps);
  c.problem.output_shape = kernels::broadcast_shape(shapes);
  c.step_dtypes = std::move(step_dtypes);
  c.step_dtypes.resize(c.problem.steps.size(), DType::f32);  // given for integer steps only
  for (size_t k = 0; k < shapes.size(); ++k) {
    const size_t n = static_cast<size_t>(element_count(shapes[k]));
    std::vector<double> values;
    if (draw) {
      values = draw(k, n);
    } else {
      for (float f : rng.normal(n)) values.push_back(f);
    }
    if (is_float(dtypes[k])) {
      std::vector<float> floats(values.begin(), values.end());
      floats = round_to_dtype(floats, dtypes[k]);
      values.assign(floats.begin(), floats.end());
    }
    c.inputs.push_back(std::move(values));
  }
  return c;
}

Tensor upload_values(const std::vector<double>& values, DType dtype, const Shape& shape) {
  if (is_float(dtype)) return upload_floats(std::vector<float>(values.begin(), values.end()), dtype, shape);
  std::vector<uint8_t> bytes(values.size() * host_element_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::i32) {
      const auto v = static_cast<int32_t>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    } else if (dtype == DType::i64) {
      const auto v = static_cast<int64_t>(values[i]);
      std::memcpy(bytes.data() + 8 * i, &v, 8);
    } else {
      bytes[i] = static_cast<uint8_t>(values[i]);
    }
  }
  return Tensor::upload(gpu().context, gpu().pool, dtype, shape, bytes.data());
}

std::vector<double> download_values(const Tensor& t) {
  if (is_float(t.dtype())) {
    const auto f = t.download_floats(gpu().context);
    return {f.begin(), f.end()};
  }
  const std::vector<uint8_t> bytes = t.download_bytes(gpu().context);
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t.dtype() == DType::i32) {
      int32_t x;
      std::memcpy(&x, bytes.data() + 4 * i, 4);
      v[i] = x;
    } else if (t.dtype() == DType::i64) {
      int64_t x;
      std::memcpy(&x, bytes.data() + 8 * i, 8);
      v[i] = static_cast<double>(x);
    } else {
      v[i] = bytes[i];
    }
  }
  return v;
}

// Runs the case (inputs at element offset `offset` inside larger buffers when > 0) and returns the
// rel L2 against float64; for integer and bool outputs, the number of differing elements. Appends
// the float output and reference to `all_got` / `all_ref` when given (a test bounds the rel L2 over
// all its cases: a lone scalar would measure one value's error, e.g. in a GELU tail where the
// exported 1 + erf(x / sqrt 2) cancels).
double run_case(const FusedCase& c, int64_t offset = 0, std::vector<float>* all_got = nullptr,
                std::vector<double>* all_ref = nullptr) {
  const FusedElementwise plan(kc(), c.problem);
  std::vector<Tensor> tensors;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const Shape& shape = c.problem.input_shapes[k];
    if (offset == 0) {
      tensors.push_back(upload_values(c.inputs[k], c.problem.input_dtypes[k], shape));
      continue;
    }
    // A view whose first element sits `offset` elements into its buffer: [offset + n] sliced.
    const int64_t n = element_count(shape);
    std::vector<double> padded(static_cast<size_t>(offset), 0.0);
    padded.insert(padded.end(), c.inputs[k].begin(), c.inputs[k].end());
    const Tensor whole = upload_values(padded, c.problem.input_dtypes[k], {offset + n});
    tensors.push_back(whole.slice_outer(offset, offset + n).reshape(shape));
  }
  const int64_t out_n = element_count(c.problem.output_shape);
  const Tensor out_buffer = poisoned(plan.output_dtype(), {out_n + 2 * offset});
  const Tensor out = out_buffer.slice_outer(2 * offset, 2 * offset + out_n).reshape(c.problem.output_shape);
  gpu::CommandRecorder recorder(gpu().context);
  plan.record(recorder, tensors, out);
  recorder.submit_and_wait();
  const std::vector<double> ref = reference(c.problem, c.inputs, c.constants, c.step_dtypes);
  const std::vector<double> got = download_values(out);
  if (!is_float(plan.output_dtype())) {
    double wrong = 0;
    for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != ref[i];
    return wrong;
  }
  if (all_got) {
    all_got->insert(all_got->end(), got.begin(), got.end());
    all_ref->insert(all_ref->end(), ref.begin(), ref.end());
  }
  return rel_l2(std::vector<float>(got.begin(), got.end()), ref);
}

FusedStep step(Op op, std::vector<FusedOperand> operands, kernels::ElementwiseAttributes attributes = {}) {
  return {op, attributes, std::move(operands)};
}
FusedOperand in(uint32_t k) {
  return FusedOperand::input(k);
}
FusedOperand st(uint32_t k) {
  return FusedOperand::step(k);
}
FusedOperand cst(uint32_t k) {
  return FusedOperand::constant(k);
}

TEST(FusedElementwise, ExportedGeluMatchesFloat64) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    std::vector<float> all_got;
    std::vector<double> all_ref;
    for (const Shape& shape : {Shape{1, 16, 33, 7}, Shape{3}, Shape{}, Shape{2, 48, 64, 65}}) {
      // 0.5 * x * (1 + erf(x / sqrt(2))) as PyTorch exports it, x read twice.
      const FusedCase c =
          make_case({shape}, {dtype}, {{dtype, std::sqrt(2.0)}, {dtype, 1.0}, {dtype, 0.5}},
                    {step(Op::Div, {in(0), cst(0)}), step(Op::Erf, {st(0)}), step(Op::Add, {st(1), cst(1)}),
                     step(Op::Mul, {in(0), st(2)}), step(Op::Mul, {st(3), cst(2)})},
                    {}, rng, [&](size_t, size_t n) {
                      std::vector<double> v;
                      for (float f : rng.normal(n, 0.0, 2.0)) v.push_back(f);
                      return v;
                    });
      const double e = run_case(c, 0, &all_got, &all_ref);
      std::printf("  GELU %s %s: rel L2 %.2e\n", std::string(dtype_name(dtype)).c_str(),
                  shape_string(shape).c_str(), e);
    }
    EXPECT_LE(rel_l2(all_got, all_ref), dtype == DType::f32 ? 1e-6 : 1e-3) << dtype_name(dtype);
  }
}

TEST(FusedElementwise, ExporterChainsWithBroadcastingMatchFloat64) {
  Random rng(test_seed());
  kernels::ElementwiseAttributes clip;
  clip.alpha = 1e-12f;
  clip.beta = std::numeric_limits<float>::max();
  kernels::ElementwiseAttributes leaky;
  leaky.alpha = 0.2f;
  struct Named {
    const char* name;
    FusedCase c;
  };
  const Named cases[] = {
      // RMSNorm's tail: x / clip(norm) * gamma * scale, norm per row, gamma per channel.
      {"RMSNorm tail", make_case({{4, 37, 64}, {4, 37, 1}, {64}}, {DType::f32, DType::f32, DType::f32},
                                 {{DType::f32, 8.0}},
                                 {step(Op::Clip, {in(1)}, clip), step(Op::Div, {in(0), st(0)}),
                                  step(Op::Mul, {st(1), in(2)}), step(Op::Mul, {st(2), cst(0)})},
                                 {}, rng,
                                 [&](size_t k, size_t n) {
                                   std::vector<double> v;
                                   for (float f : k == 1 ? rng.uniform(n, 0.5, 3.0) : rng.normal(n)) v.push_back(f);
                                   return v;
                                 })},
      // Rotary embedding: x * cos + rotate(x) * sin, the tables broadcast over batch and heads.
      {"rotary", make_case({{2, 3, 50, 16}, {50, 16}, {2, 3, 50, 16}, {50, 16}},
                           {DType::f32, DType::f32, DType::f32, DType::f32}, {},
                           {step(Op::Mul, {in(0), in(1)}), step(Op::Mul, {in(2), in(3)}),
                            step(Op::Add, {st(0), st(1)})},
                           {}, rng)},
      // A gate: x * sigmoid(g) with g per channel, then LeakyRelu (an attribute) and a residual.
      {"gate", make_case({{2, 24, 1}, {2, 24, 301}, {2, 24, 301}}, {DType::f32, DType::f32, DType::f32}, {},
                         {step(Op::Sigmoid, {in(0)}), step(Op::Mul, {in(1), st(0)}),
                          step(Op::LeakyRelu, {st(1)}, leaky), step(Op::Add, {st(2), in(2)})},
                         {}, rng)},
      // Where over a bool condition per row, with a constant in one branch.
      {"where", make_case({{17, 1}, {17, 40}, {40}}, {DType::boolean, DType::f32, DType::f32},
                          {{DType::f32, -3.5}},
                          {step(Op::Mul, {in(1), cst(0)}), step(Op::Neg, {in(2)}),
                           step(Op::Where, {in(0), st(0), st(1)})},
                          {}, rng,
                          [&](size_t k, size_t n) {
                            std::vector<double> v;
                            if (k == 0) {
                              for (size_t i = 0; i < n; ++i) v.push_back(static_cast<double>(rng.integer(0, 1)));
                            } else {
                              for (float f : rng.normal(n)) v.push_back(f);
                            }
                            return v;
                          })},
      // Integer arithmetic into a comparison selecting floats: i64 indices, an i32 constant.
      {"integer compare -> Where",
       make_case({{5, 1}, {1, 9}, {5, 9}}, {DType::i64, DType::i64, DType::f32}, {{DType::i64, 3}, {DType::f32, 0.25}},
                 {step(Op::Mul, {in(0), cst(0)}), step(Op::Sub, {st(0), in(1)}), step(Op::Greater, {st(1), cst(0)}),
                  step(Op::Mul, {in(2), cst(1)}), step(Op::Where, {st(2), in(2), st(3)})},
                 {DType::i64, DType::i64, DType::boolean, DType::f32, DType::f32}, rng,
                 [&](size_t k, size_t n) {
                   std::vector<double> v;
                   for (size_t i = 0; i < n; ++i)
                     v.push_back(k < 2 ? static_cast<double>(rng.integer(-20, 20)) : rng.normal(1)[0]);
                   return v;
                 })},
  };
  for (const Named& named : cases) {
    for (int64_t offset : {0, 1, 3}) {
      const double e = run_case(named.c, offset);
      std::printf("  %-26s offset %lld: rel L2 %.2e\n", named.name, static_cast<long long>(offset), e);
      EXPECT_LE(e, 1e-6) << named.name << " offset " << offset;
    }
  }
}

TEST(FusedElementwise, IntegerChainsAndCastsAreExact) {
  Random rng(test_seed());
  kernels::ElementwiseAttributes to_f32;
  to_f32.to = DType::f32;
  kernels::ElementwiseAttributes to_bool;
  to_bool.to = DType::boolean;
  for (DType dtype : {DType::i32, DType::i64}) {
    // ((a + b) / 3 - max(a, 7)) as float, then > 0 as bool.
    const auto draw = [&](size_t, size_t n) {
      std::vector<double> v;
      for (size_t i = 0; i < n; ++i) v.push_back(static_cast<double>(rng.integer(-1000, 1000)));
      return v;
    };
    const FusedCase as_float = make_case(
        {{6, 1, 5}, {7, 1}}, {dtype, dtype}, {{dtype, 3}, {dtype, 7}},
        {step(Op::Add, {in(0), in(1)}), step(Op::Div, {st(0), cst(0)}), step(Op::Max, {in(0), cst(1)}),
         step(Op::Sub, {st(1), st(2)}), step(Op::Cast, {st(3)}, to_f32)},
        {dtype, dtype, dtype, dtype, DType::f32}, rng, draw);
    EXPECT_EQ(run_case(as_float), 0.0) << dtype_name(dtype);
    FusedElementwiseProblem as_bool_problem = as_float.problem;
    as_bool_problem.steps.back().attributes = to_bool;
    FusedCase as_bool = as_float;
    as_bool.problem = as_bool_problem;
    as_bool.step_dtypes.back() = DType::boolean;
    EXPECT_EQ(run_case(as_bool), 0.0) << dtype_name(dtype);
  }
}

// Random DAGs: 1-7 inputs of random broadcasting shapes (ranks 0-5), 2-12 steps of unary and
// binary float ops reading any earlier step, input or constant; attributes on LeakyRelu and Clip.
TEST(FusedElementwise, RandomGroupsMatchFloat64) {
  Random rng(test_seed());
  const Op unary[] = {Op::Tanh,      Op::Sigmoid, Op::Abs, Op::Neg, Op::Relu,
                      Op::LeakyRelu, Op::Clip,    Op::Erf, Op::Sin};
  const Op binary[] = {Op::Add, Op::Sub, Op::Mul, Op::Max, Op::Min};
  std::vector<float> all_got;
  std::vector<double> all_ref;
  for (int trial = 0; trial < 40; ++trial) {
    const int inputs = static_cast<int>(rng.integer(1, static_cast<int64_t>(kernels::kMaxFusedInputs)));
    const int rank = static_cast<int>(rng.integer(0, 5));
    Shape out(static_cast<size_t>(rank));
    for (auto& d : out) d = rng.integer(1, 9);
    std::vector<Shape> shapes;
    for (int k = 0; k < inputs; ++k) {
      Shape s(out.end() - rng.integer(0, rank), out.end());
      for (auto& d : s)
        if (rng.integer(0, 2) == 0) d = 1;
      shapes.push_back(s);
    }
    shapes[0] = out;
    std::vector<std::pair<DType, double>> constants;
    for (int k = 0, n = static_cast<int>(rng.integer(0, 3)); k < n; ++k)
      constants.emplace_back(DType::f32, rng.uniform(1, -2.0, 2.0)[0]);
    std::vector<FusedStep> steps;
    const int count = static_cast<int>(rng.integer(2, 12));
    auto operand = [&](int j) {
      const int64_t pick = rng.integer(0, 9);
      if (pick < 2 && !constants.empty())
        return cst(static_cast<uint32_t>(rng.integer(0, static_cast<int64_t>(constants.size()) - 1)));
      if (pick < 6 && j > 0) return st(static_cast<uint32_t>(rng.integer(0, j - 1)));
      return in(static_cast<uint32_t>(rng.integer(0, inputs - 1)));
    };
    for (int j = 0; j < count; ++j) {
      kernels::ElementwiseAttributes a;
      if (rng.integer(0, 1) == 0) {
        const Op op = unary[rng.integer(0, std::size(unary) - 1)];
        if (op == Op::LeakyRelu) a.alpha = 0.3f;
        if (op == Op::Clip) a.alpha = -0.75f, a.beta = 1.5f;
        steps.push_back(step(op, {operand(j)}, a));
      } else {
        steps.push_back(step(binary[rng.integer(0, std::size(binary) - 1)], {operand(j), operand(j)}));
      }
    }
    // The last step reads input 0 (full shape) so the output has the output shape.
    steps.push_back(step(Op::Add, {st(static_cast<uint32_t>(count - 1)), in(0)}));
    const FusedCase c = make_case(shapes, std::vector<DType>(static_cast<size_t>(inputs), DType::f32), constants,
                             steps, {}, rng);
    // Per trial loosely (a case of few elements measures few values' cancellation), all together tightly.
    const double e = run_case(c, trial % 3, &all_got, &all_ref);
    EXPECT_LE(e, 1e-4) << "trial " << trial << ": " << inputs << " inputs, " << steps.size() << " steps, out "
                       << shape_string(c.problem.output_shape);
  }
  const double all = rel_l2(all_got, all_ref);
  std::printf("  40 random groups: rel L2 %.2e over %zu elements\n", all, all_ref.size());
  EXPECT_LE(all, 1e-6);
}

// A rotary embedding with its rotate_half folded in (FusedElementwiseProblem::pair_rotated):
// y = x cos + rot(x) sin, x given twice, the second copy read with its pairs rotated; the reference
// reads a rotated copy. Shapes with a partial last vec4 and views off 16-byte alignment included.
TEST(FusedElementwise, PairRotatedInputsMatchFloat64) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    for (const Shape& shape : {Shape{3, 5, 6}, Shape{2, 8, 33, 64}, Shape{2}}) {
      const Shape table(shape.end() - std::min<size_t>(shape.size(), 2), shape.end());
      FusedCase c = make_case({shape, shape, table, table}, {dtype, dtype, dtype, dtype}, {},
                         {step(Op::Mul, {in(0), in(2)}), step(Op::Mul, {in(1), in(3)}), step(Op::Add, {st(0), st(1)})},
                         {}, rng);
      c.inputs[1] = c.inputs[0];
      FusedCase rotated_reference = c;
      std::vector<double>& r = rotated_reference.inputs[1];
      for (size_t i = 0; i < r.size(); i += 2) std::tie(r[i], r[i + 1]) = std::pair(-c.inputs[0][i + 1], c.inputs[0][i]);
      c.problem.pair_rotated = {false, true, false, false};
      for (const int64_t offset : {int64_t{0}, int64_t{dtype == DType::f16 ? 2 : 3}}) {  // f16 views start even
        const FusedElementwise plan(kc(), c.problem);
        std::vector<Tensor> tensors;
        for (size_t k = 0; k < c.inputs.size(); ++k) {
          const int64_t n = element_count(c.problem.input_shapes[k]);
          std::vector<double> padded(static_cast<size_t>(offset), 0.0);
          padded.insert(padded.end(), c.inputs[k].begin(), c.inputs[k].end());
          tensors.push_back(upload_values(padded, dtype, {offset + n}).slice_outer(offset, offset + n).reshape(c.problem.input_shapes[k]));
        }
        const Tensor out = poisoned(plan.output_dtype(), shape);
        gpu::CommandRecorder recorder(gpu().context);
        plan.record(recorder, tensors, out);
        recorder.submit_and_wait();
        const std::vector<double> ref = reference(rotated_reference.problem, rotated_reference.inputs,
                                                  rotated_reference.constants, rotated_reference.step_dtypes);
        const std::vector<double> got = download_values(out);
        const double e = rel_l2(std::vector<float>(got.begin(), got.end()), ref);
        EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << dtype_name(dtype) << " " << shape_string(shape) << " offset " << offset;
      }
    }
  }
  // Only inputs of the output's shape with an even last dim, in a float dtype, can be rotated.
  FusedElementwiseProblem p;
  p.input_shapes = {{4, 3}};
  p.input_dtypes = {DType::f32};
  p.output_shape = {4, 3};
  p.steps = {step(Op::Neg, {in(0)})};
  p.pair_rotated = {true};
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);
  p.output_shape = {2, 4};
  p.input_shapes = {{4}};
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);  // broadcast
  p.input_shapes = {{2, 4}};
  p.input_dtypes = {DType::i32};
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);
  p.input_dtypes = {DType::f32};
  EXPECT_NO_THROW(FusedElementwise(kc(), p));
}

// Inputs read as strided views of larger tensors (FusedElementwiseProblem's views): the second half of
// a channel axis, a permuted view (a transpose's strides), next to a broadcast input; float16 too.
TEST(FusedElementwise, ViewInputsMatchFloat64) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    const Shape out = {3, 5, 34};
    // Input 0: channels 5..9 of a [3, 10, 34] source. Input 1: a [34, 5, 3] source read transposed.
    // Input 2: a [34] row broadcast. y = x0 * x1 + x2.
    FusedCase c = make_case({out, out, {34}}, {dtype, dtype, dtype}, {},
                       {step(Op::Mul, {in(0), in(1)}), step(Op::Add, {st(0), in(2)})}, {}, rng);
    const std::vector<double> x0 = c.inputs[0], x1 = c.inputs[1];
    std::vector<double> source0(3 * 10 * 34, 7.0), source1(34 * 5 * 3, 0.0);
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t ch = 0; ch < 5; ++ch)
        for (int64_t t = 0; t < 34; ++t) {
          source0[(n * 10 + 5 + ch) * 34 + t] = x0[(n * 5 + ch) * 34 + t];
          source1[(t * 5 + ch) * 3 + n] = x1[(n * 5 + ch) * 34 + t];
        }
    FusedElementwiseProblem p = c.problem;
    p.view_sources = {{3, 10, 34}, {34, 5, 3}, {}};
    p.view_strides = {{340, 34, 1}, {1, 3, 15}, {}};
    p.view_offsets = {5 * 34, 0, 0};
    const FusedElementwise plan(kc(), p);
    const std::vector<Tensor> tensors = {upload_values(source0, dtype, {3, 10, 34}),
                                         upload_values(source1, dtype, {34, 5, 3}),
                                         upload_values(c.inputs[2], dtype, {34})};
    const Tensor y = poisoned(plan.output_dtype(), out);
    gpu::CommandRecorder recorder(gpu().context);
    plan.record(recorder, tensors, y);
    recorder.submit_and_wait();
    const std::vector<double> ref = reference(c.problem, c.inputs, c.constants, c.step_dtypes);
    const std::vector<double> got = download_values(y);
    EXPECT_LE(rel_l2(std::vector<float>(got.begin(), got.end()), ref), dtype == DType::f32 ? 1e-6 : 1e-3)
        << dtype_name(dtype);
    // A view reaching past its source is refused.
    p.view_offsets[0] = 6 * 34;
    EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);
  }
}

TEST(FusedElementwise, MalformedProblemsThrow) {
  FusedElementwiseProblem p;
  p.input_shapes = {{4}};
  p.input_dtypes = {DType::f32};
  p.output_shape = {4};
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);  // no steps
  p.steps = {step(Op::Add, {in(0), st(0)})};                       // reads itself
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);
  p.steps = {step(Op::Add, {in(0), cst(0)})};  // no such constant
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);
  p.steps = {step(Op::Erf, {in(0)})};
  p.input_dtypes = {DType::i32};  // Erf of an integer
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);
  p.input_dtypes = {DType::f32};
  p.output_shape = {3};  // the input does not broadcast to it
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);
  p.output_shape = {4};
  p.input_shapes.assign(kernels::kMaxFusedInputs + 1, Shape{4});
  p.input_dtypes.assign(kernels::kMaxFusedInputs + 1, DType::f32);
  EXPECT_THROW(FusedElementwise(kc(), p), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
