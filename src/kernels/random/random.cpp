#include "kernels/random/random.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

// Mirrors `Params` in random_fill.wgsl.
struct RandomUniforms {
  uint32_t count, key0, key1, y_offset, p_offset;
  float a, b;
  uint32_t pad;
};

}  // namespace

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += 0x9E3779B9u;
    key[1] += 0xBB67AE85u;
  }
  return c;
}

void record_random(const KernelContext& kc, gpu::CommandRecorder& recorder, const RandomDraw& draw,
                   const Tensor* probabilities, const Tensor& y) {
  const bool bernoulli = draw.distribution == RandomDistribution::Bernoulli;
  if (bernoulli != (probabilities != nullptr))
    throw std::invalid_argument("random: probabilities are given exactly for Bernoulli");
  if (!bernoulli && !is_float(y.dtype()))
    throw std::invalid_argument(
        fmt::format("random: a float16/float32 output required, got {}", dtype_name(y.dtype())));
  if (bernoulli && (!is_float(probabilities->dtype()) || probabilities->numel() != y.numel()))
    throw std::invalid_argument(
        "random: Bernoulli probabilities must be float with the output's element count");
  if (y.numel() >= INT32_MAX) throw std::invalid_argument("random: 2^31 elements or more");
  if (y.numel() == 0) return;
  require_bindable(kc, y, "random output");
  RandomUniforms u{};
  u.count = static_cast<uint32_t>(y.numel());
  u.key0 = draw.key[0];
  u.key1 = draw.key[1];
  u.y_offset = y.element_offset(kc.gpu);
  u.a = draw.a;
  u.b = draw.b;
  const int y_binding = bernoulli ? 1 : 0;
  const bool integer = !is_float(y.dtype());
  TemplateValues values = {
      {"UNIFORM", draw.distribution == RandomDistribution::Uniform ? "1" : "0"},
      {"NORMAL", draw.distribution == RandomDistribution::Normal ? "1" : "0"},
      {"BERNOULLI", bernoulli ? "1" : "0"},
      {"INTEGER", integer ? "1" : "0"},
      {"Y_BINDING", std::to_string(y_binding)},
      {"PARAMS_BINDING", std::to_string(y_binding + 1)},
      {"Y_ACCESS", ""},
      {"P_ACCESS", ""},
  };
  if (!integer) values["Y_ACCESS"] = tensor_access("y", y_binding, y.dtype(), true);
  if (bernoulli) {
    require_bindable(kc, *probabilities, "Bernoulli probabilities");
    values["P_ACCESS"] = tensor_access("p", 0, probabilities->dtype(), false);
    u.p_offset = probabilities->element_offset(kc.gpu);
  }
  const auto& pipeline = shader_pipeline(kc.pipelines, "random/random_fill.wgsl", values, "random fill");
  const auto workgroups = gpu::split_workgroups((y.numel() + 255) / 256, kc.gpu.limits());
  if (bernoulli) {
    recorder.dispatch(pipeline, {probabilities->binding(kc.gpu), y.binding(kc.gpu)}, &u, sizeof(u),
                      workgroups, "random Bernoulli");
  } else {
    recorder.dispatch(pipeline, {y.binding(kc.gpu)}, &u, sizeof(u), workgroups, "random fill");
  }
}

}  // namespace onda::kernels
