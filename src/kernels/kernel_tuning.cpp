#include "kernels/kernel_tuning.h"

#include <fmt/format.h>

#include <charconv>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace onda::kernels {
namespace {

[[noreturn]] void malformed(std::string_view field, std::string_view value, std::string_view expected) {
  throw std::invalid_argument(fmt::format("tuning {} is '{}', expected {}", field, value, expected));
}

// `value` as min_count .. max_count comma-separated unsigned 32-bit numbers and nothing else.
std::vector<uint32_t> numbers(std::string_view field, std::string_view value, size_t min_count,
                              size_t max_count, std::string_view expected) {
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
  malformed(field, value, expected);
}

uint32_t number(std::string_view field, std::string_view value) {
  return numbers(field, value, 1, 1, "an unsigned number")[0];
}

// The enumerator `value` names among `names`.
template <class E>
E named(std::string_view field, std::string_view value,
        std::initializer_list<std::pair<std::string_view, E>> names) {
  std::string expected;
  for (const auto& [name, e] : names) {
    if (value == name) return e;
    expected += fmt::format("{}{}", expected.empty() ? "" : " | ", name);
  }
  malformed(field, value, expected);
}

bool flag(std::string_view field, std::string_view value) {
  if (value == "0" || value == "1") return value == "1";
  malformed(field, value, "0 or 1");
}

// A tiling with one number per field of `fields`, in order; "0" sets *off instead when `off` is given.
template <class T>
void tiling(std::string_view field, std::string_view value, std::string_view expected,
            std::initializer_list<uint32_t T::*> fields, std::optional<T>& out, bool* off) {
  if (off) *off = value == "0";
  if (off && *off) {
    out.reset();
    return;
  }
  const std::vector<uint32_t> n = numbers(field, value, fields.size(), fields.size(), expected);
  T t;
  size_t i = 0;
  for (uint32_t T::*member : fields) t.*member = n[i++];
  out = t;
}

void set_vec4(std::string_view field, std::string_view value, std::optional<rnn::Vec4StepTiling>& out) {
  const char* expected = "WGX,WGY,TM,NV,BK,KS[,PREFETCH 0|1|2[,PERSISTENT 0|1]]";
  const auto n = numbers(field, value, 6, 8, expected);
  if ((n.size() >= 7 && n[6] > 2) || (n.size() == 8 && n[7] > 1)) malformed(field, value, expected);
  rnn::Vec4StepTiling t;
  t.wg_x = n[0];
  t.wg_y = n[1];
  t.thread_rows = n[2];
  t.thread_units = n[3];
  t.k_tile = n[4];
  t.k_split = n[5];
  t.prefetch = n.size() < 7 || n[6] != 0;
  t.double_buffer = n.size() >= 7 && n[6] == 2;
  t.persistent = n.size() == 8 && n[7] == 1;
  out = t;
}

void set_rnn(rnn::RnnTuning& r, std::string_view field, std::string_view name, std::string_view value) {
  using namespace rnn;
  if (name == "step_kernel") {
    r.step_kernel = named<StepKernel>(field, value,
                                      {{"automatic", StepKernel::automatic},
                                       {"dot", StepKernel::dot},
                                       {"tiled", StepKernel::tiled},
                                       {"gemm", StepKernel::gemm},
                                       {"vec4", StepKernel::vec4}});
  } else if (name == "resident") {
    tiling<ResidentTiling>(field, value, "BM,KQ or 0",
                           {&ResidentTiling::rows, &ResidentTiling::slice_vectors}, r.resident,
                           &r.resident_off);
  } else if (name == "cooperative") {
    using T = CooperativeTiling;
    tiling<T>(field, value, "JT,BM,KQ,RC or 0", {&T::units, &T::rows, &T::slice_vectors, &T::row_chunks},
              r.cooperative, &r.cooperative_off);
  } else if (name == "rows") {
    using T = RowSequenceTiling;
    tiling<T>(field, value, "BM,TM,UV,KS,KB or 0",
              {&T::rows, &T::thread_rows, &T::unit_vector, &T::k_split, &T::k_block}, r.rows, &r.rows_off);
  } else if (name == "tiled") {
    using T = TiledStepTiling;
    tiling<T>(field, value, "BM,TM,BU,TU,KT,KS",
              {&T::rows, &T::thread_rows, &T::units, &T::thread_units, &T::k_tile, &T::k_split}, r.tiled,
              nullptr);
  } else if (name == "vec4") {
    set_vec4(field, value, r.vec4);
  } else {
    throw std::invalid_argument(fmt::format("unknown tuning field '{}'", field));
  }
}

void set_fft(fft::FftTuning& f, std::string_view field, std::string_view name, std::string_view value) {
  using namespace fft;
  if (name == "code_path") {
    f.code_path = named<FftCodePath>(field, value,
                                     {{"automatic", FftCodePath::automatic},
                                      {"generic", FftCodePath::generic},
                                      {"unrolled", FftCodePath::unrolled}});
  } else if (name == "real_split_pairs") {
    f.real_split_pairs = named<RealSplitPairs>(
        field, value, {{"by_length", RealSplitPairs::by_length}, {"every_pass", RealSplitPairs::every_pass}});
  } else if (name == "radices") {
    const auto n = numbers(field, value, 1, 64, "R1,R2,... (each >= 2)");
    f.radices.clear();
    for (uint32_t r : n) {
      if (r < 2) malformed(field, value, "R1,R2,... (each >= 2)");
      f.radices.push_back(static_cast<int>(r));
    }
  } else if (name == "threads") {
    f.threads = number(field, value);
  } else if (name == "per_group") {
    f.per_group = number(field, value);
  } else if (name == "group_iterations") {
    f.group_iterations = number(field, value);
  } else {
    throw std::invalid_argument(fmt::format("unknown tuning field '{}'", field));
  }
}

void set_gemm(gemm::GemmTuning& g, std::string_view field, std::string_view name, std::string_view value) {
  if (name == "for_unroll") {
    g.for_unroll = flag(field, value);
  } else if (name == "double_buffer") {
    g.double_buffer = flag(field, value);
  } else if (name == "vec_store") {
    g.vec_store = flag(field, value);
  } else if (name == "unroll_k") {
    g.unroll_k = flag(field, value);
  } else if (name == "tile") {
    using T = gemm::GemmTile;
    bool off = false;
    tiling<T>(field, value, "WGX,WGY,TM,BK,NV,GROUP_M or 0",
              {&T::wg_x, &T::wg_y, &T::tm, &T::bk, &T::nv, &T::group_m}, g.tile, &off);
  } else {
    throw std::invalid_argument(fmt::format("unknown tuning field '{}'", field));
  }
}

}  // namespace

const KernelTuning& default_kernel_tuning() {
  static const KernelTuning defaults;
  return defaults;
}

void set_tuning(KernelTuning& tuning, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  const size_t dot = assignment.find('.');
  if (eq == std::string_view::npos || dot == std::string_view::npos || dot > eq) {
    throw std::invalid_argument(
        fmt::format("tuning '{}' is not family.field=value (e.g. rnn.step_kernel=vec4)", assignment));
  }
  const std::string_view field = assignment.substr(0, eq);
  const std::string_view family = field.substr(0, dot);
  const std::string_view name = field.substr(dot + 1);
  const std::string_view value = assignment.substr(eq + 1);
  if (family == "rnn") {
    set_rnn(tuning.rnn, field, name, value);
  } else if (family == "fft") {
    set_fft(tuning.fft, field, name, value);
  } else if (family == "gemm") {
    set_gemm(tuning.gemm, field, name, value);
  } else if (field == "conv.implicit_gemm") {
    tuning.conv.implicit_gemm = flag(field, value);
  } else if (field == "attention.key_splits") {
    tuning.attention.key_splits = number(field, value);
  } else {
    throw std::invalid_argument(fmt::format("unknown tuning field '{}'", field));
  }
}

}  // namespace onda::kernels
