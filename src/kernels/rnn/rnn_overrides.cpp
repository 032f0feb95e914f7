#include "kernels/rnn/rnn_overrides.h"

#include <fmt/format.h>

#include <charconv>
#include <initializer_list>
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

// The tiling in environment variable `name`: unset or empty gives nullopt, "0" too when `disabled` is
// given (then set), anything else must be one number per field of `fields`, in order.
template <class T>
std::optional<T> tiling_from_env(const char* name, std::string_view expected, bool* disabled,
                                 std::initializer_list<uint32_t T::*> fields) {
  const auto env = env_value(name);
  if (disabled) *disabled = env == "0";
  if (!env || (disabled && *disabled)) return std::nullopt;
  const std::vector<uint32_t> n = numbers(name, *env, fields.size(), fields.size(), expected);
  T t;
  size_t i = 0;
  for (uint32_t T::*field : fields) t.*field = n[i++];
  return t;
}

}  // namespace

std::optional<CooperativeTiling> cooperative_tiling_from_env(bool* disabled) {
  using T = CooperativeTiling;
  return tiling_from_env<T>("ONDA_RNN_COOP", "JT,BM,KQ,RC or 0", disabled,
                            {&T::units, &T::rows, &T::slice_vectors, &T::row_chunks});
}

std::optional<ResidentTiling> resident_tiling_from_env(bool* disabled) {
  using T = ResidentTiling;
  return tiling_from_env<T>("ONDA_RNN_RESIDENT", "BM,KQ or 0", disabled, {&T::rows, &T::slice_vectors});
}

std::optional<RowSequenceTiling> row_tiling_from_env(bool* disabled) {
  using T = RowSequenceTiling;
  return tiling_from_env<T>("ONDA_RNN_ROWS", "BM,TM,UV,KS,KB or 0", disabled,
                            {&T::rows, &T::thread_rows, &T::unit_vector, &T::k_split, &T::k_block});
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
  using T = TiledStepTiling;
  return tiling_from_env<T>("ONDA_RNN_TILED", "BM,TM,BU,TU,KT,KS", nullptr,
                            {&T::rows, &T::thread_rows, &T::units, &T::thread_units, &T::k_tile, &T::k_split});
}

std::optional<Vec4StepTiling> vec4_tiling_from_env() {
  const auto env = env_value("ONDA_RNN_VEC4");
  if (!env) return std::nullopt;
  const char* expected = "WGX,WGY,TM,NV,BK,KS[,PREFETCH 0|1|2[,PERSISTENT 0|1]]";
  const auto n = numbers("ONDA_RNN_VEC4", *env, 6, 8, expected);
  Vec4StepTiling t;
  t.wg_x = n[0];
  t.wg_y = n[1];
  t.thread_rows = n[2];
  t.thread_units = n[3];
  t.k_tile = n[4];
  t.k_split = n[5];
  t.prefetch = n.size() < 7 || n[6] != 0;
  t.double_buffer = n.size() >= 7 && n[6] == 2;
  t.persistent = n.size() == 8 && n[7] == 1;
  if ((n.size() >= 7 && n[6] > 2) || (n.size() == 8 && n[7] > 1)) {
    throw std::invalid_argument(fmt::format("ONDA_RNN_VEC4 is '{}', expected {}", *env, expected));
  }
  return t;
}

}  // namespace onda::kernels::rnn
