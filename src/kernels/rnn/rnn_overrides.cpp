#include "kernels/rnn/rnn_overrides.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace onda::kernels::rnn {
namespace {

// The value of environment variable `name`; nullopt when unset or empty.
std::optional<std::string> env_value(const char* name) {
  const char* env = std::getenv(name);
  if (!env || !*env) return std::nullopt;
  return std::string(env);
}

// `value` as min_count .. max_count comma-separated unsigned 32-bit numbers and nothing else; throws
// naming the variable and `expected` otherwise.
std::vector<uint32_t> numbers(const char* name, const std::string& value, size_t min_count, size_t max_count,
                              std::string_view expected) {
  std::vector<uint32_t> out;
  const char* p = value.data();
  const char* end = p + value.size();
  for (;;) {
    uint32_t v = 0;
    const auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || out.size() == max_count) break;
    out.push_back(v);
    p = next;
    if (p == end) {
      if (out.size() >= min_count) return out;
      break;
    }
    if (*p != ',') break;
    ++p;
  }
  throw std::invalid_argument(fmt::format("{} is '{}', expected {}", name, value, expected));
}

}  // namespace

std::optional<CooperativeTiling> cooperative_tiling_from_env(bool* disabled) {
  const auto env = env_value("ONDA_RNN_COOP");
  *disabled = env == "0";
  if (!env || *disabled) return std::nullopt;
  const auto n = numbers("ONDA_RNN_COOP", *env, 4, 4, "JT,BM,KQ,RC or 0");
  CooperativeTiling t;
  t.units = n[0];
  t.rows = n[1];
  t.slice_vectors = n[2];
  t.row_chunks = n[3];
  return t;
}

std::optional<ResidentTiling> resident_tiling_from_env(bool* disabled) {
  const auto env = env_value("ONDA_RNN_RESIDENT");
  *disabled = env == "0";
  if (!env || *disabled) return std::nullopt;
  const auto n = numbers("ONDA_RNN_RESIDENT", *env, 2, 2, "BM,KQ or 0");
  ResidentTiling t;
  t.rows = n[0];
  t.slice_vectors = n[1];
  return t;
}

std::optional<RowSequenceTiling> row_tiling_from_env(bool* disabled) {
  const auto env = env_value("ONDA_RNN_ROWS");
  *disabled = env == "0";
  if (!env || *disabled) return std::nullopt;
  const auto n = numbers("ONDA_RNN_ROWS", *env, 5, 5, "BM,TM,UV,KS,KB or 0");
  RowSequenceTiling t;
  t.rows = n[0];
  t.thread_rows = n[1];
  t.unit_vector = n[2];
  t.k_split = n[3];
  t.k_block = n[4];
  return t;
}

StepKernel resolve_step_kernel(StepKernel requested) {
  if (requested != StepKernel::automatic) return requested;
  const auto env = env_value("ONDA_RNN_STEP_KERNEL");
  if (!env) return StepKernel::automatic;
  if (*env == "dot") return StepKernel::dot;
  if (*env == "tiled") return StepKernel::tiled;
  if (*env == "gemm") return StepKernel::gemm;
  if (*env == "vec4") return StepKernel::vec4;
  throw std::invalid_argument(
      fmt::format("ONDA_RNN_STEP_KERNEL is '{}', expected 'dot', 'tiled', 'gemm' or 'vec4'", *env));
}

std::optional<TiledStepTiling> tiled_tiling_from_env() {
  const auto env = env_value("ONDA_RNN_TILED");
  if (!env) return std::nullopt;
  const auto n = numbers("ONDA_RNN_TILED", *env, 6, 6, "BM,TM,BU,TU,KT,KS");
  TiledStepTiling t;
  t.rows = n[0];
  t.thread_rows = n[1];
  t.units = n[2];
  t.thread_units = n[3];
  t.k_tile = n[4];
  t.k_split = n[5];
  return t;
}

std::optional<Vec4StepTiling> vec4_tiling_from_env() {
  const auto env = env_value("ONDA_RNN_VEC4");
  if (!env) return std::nullopt;
  const auto n = numbers("ONDA_RNN_VEC4", *env, 6, 7, "WGX,WGY,TM,NV,BK,KS[,PREFETCH]");
  Vec4StepTiling t;
  t.wg_x = n[0];
  t.wg_y = n[1];
  t.thread_rows = n[2];
  t.thread_units = n[3];
  t.k_tile = n[4];
  t.k_split = n[5];
  t.prefetch = n.size() < 7 || n[6] != 0;
  return t;
}

}  // namespace onda::kernels::rnn
