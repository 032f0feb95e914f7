// Conv / ConvTranspose timings against cuDNN (bench/torch_conv.py runs the same cases, read from the
// same bench/conv_cases.txt, through torch.nn.functional in the same GPU-machine call): the HTDemucs
// iSTFT overlap-add ConvTranspose (windowed-identity weight, batch 8 and 12), HTDemucs decoder
// ConvTranspose and encoder / decoder Conv shapes, SCNet / UVR shapes.
//
//   build/bench_conv [--quick] [--breakdown] [--repeats R] [--cases FILE] [--only SUBSTRING] [--paths A,B]
//                    [--tuning conv.implicit_gemm=0|gemm.for_unroll=1 ...]
//
// Each case runs on the paths its line names:
//   session      the ONNX op (ops/conv_ops.cpp) as Session records it: weights with more than 65536
//                elements live only on the GPU, smaller ones are host values uploaded per run, all
//                are constants (prepacked once per node), so the path is the one Session takes;
//   implicit, implicit64, implicit128, implicit_nosplit, implicit_prefetch   kernels::conv's implicit
//                GEMM forced (tile chosen from the shape, or 64 / 128 positions per tile, or without
//                split K, or with register prefetch of the next K step); the label
//                names the tile (BM x BN, K step, slices of a split K); implicit_phases: a ConvTranspose
//                whose kernel equals its stride run per phase instead of as one shuffled GEMM;
//   gemm, direct, overlap_add   kernels::conv with that path forced (gemm = im2col + GEMM) (a ConvTranspose gemm with its
//                weight prepacked once, as Session would hold it; overlap_add with the diagonal
//                given, tiled where the hop is >= 32);
//   overlap_add_per_output      the untiled overlap-add kernel (one invocation per output).
// gpu ms: median over repeats of the summed GPU timestamps of one run's dispatches (every dispatch
// in its own pass); wall ms: `repeats` runs recorded into one submit, divided. GFLOP/s counts the
// dense multiply-adds (2 per tap) even where a path does fewer (overlap-add: C/s taps per output);
// GB/s counts X read once and Y written once. --breakdown lists the GPU time of each kernel of the
// median run under its line. --quick runs the tiny cases (lavapipe, CI-sized) and
// checks every path's output against a float64 reference (rel L2).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/clock_warmup.h"
#include "gpu/command_recorder.h"
#include "gpu/pipeline_cache.h"
#include "gpu/profiler.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/conv_uniforms.h"
#include "ops/op_registry.h"
#include "test_conv_reference.h"
#include "tuning_args.h"

using namespace onda;
namespace conv = onda::kernels::conv;

namespace {

// The --tuning of the command line (tuning_args.h).
kernels::KernelTuning g_tuning;

// Session keeps initializers with more elements than this only on the GPU (kMaxHostElements in
// src/runtime/session.cpp); smaller ones stay host values that the op sees (and may inspect).
constexpr int64_t kSessionHostElements = int64_t{1} << 16;

struct Case {
  std::string set, name, op;
  Shape x, w;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group = 1;
  std::string weight;  // random | identity
  bool bias = false;
  std::vector<std::string> paths;
};

std::vector<int64_t> parse_list(const std::string& text, char separator) {
  std::vector<int64_t> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, separator);) values.push_back(std::stoll(item));
  return values;
}

std::vector<Case> read_cases(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::vector<Case> cases;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream in(line);
    Case c;
    std::string x, w, strides, pads, dilations, bias, paths;
    if (!(in >> c.set >> c.name >> c.op >> x >> w >> strides >> pads >> dilations >> c.group >> c.weight >> bias >>
          paths)) {
      throw std::runtime_error("bad case line: " + line);
    }
    c.x = parse_list(x, 'x');
    c.w = parse_list(w, 'x');
    c.strides = parse_list(strides, ',');
    c.pads = parse_list(pads, ',');
    c.dilations = parse_list(dilations, ',');
    c.bias = bias == "bias";
    std::stringstream p(paths);
    for (std::string item; std::getline(p, item, ',');) c.paths.push_back(item);
    cases.push_back(c);
  }
  return cases;
}

conv::ConvGeometry geometry_of(const Case& c) {
  conv::ConvAttributes a;
  a.strides = c.strides;
  a.pads = c.pads;
  a.dilations = c.dilations;
  a.group = c.group;
  return c.op == "conv" ? conv::resolve_conv(c.x, c.w, a) : conv::resolve_conv_transpose(c.x, c.w, a);
}

Node node_of(const Case& c) {
  Node node;
  node.op_type = c.op == "conv" ? "Conv" : "ConvTranspose";
  node.name = c.name;
  node.inputs = {"x", "w"};
  if (c.bias) node.inputs.push_back("b");
  node.outputs = {"y"};
  auto ints = [&](const char* name, const std::vector<int64_t>& v) {
    Attribute a;
    a.name = name;
    a.value = v;
    node.attributes.push_back(a);
  };
  ints("strides", c.strides);
  ints("pads", c.pads);
  ints("dilations", c.dilations);
  Attribute group;
  group.name = "group";
  group.value = c.group;
  node.attributes.push_back(group);
  return node;
}

double rel_l2(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

double dense_flops(const conv::ConvGeometry& g) {
  const double taps = static_cast<double>(g.kernel_elements());
  return g.transpose ? 2.0 * g.batch * g.in_channels * g.in_positions() * (g.out_channels / g.group) * taps
                     : 2.0 * g.batch * g.out_channels * g.out_positions() * (g.in_channels / g.group) * taps;
}

// Everything one case needs on the GPU, and how to record one run of it on a path.
class Runner {
 public:
  Runner(gpu::Context& context, gpu::BufferPool& pool, gpu::BufferPool& persistent, gpu::PipelineCache& pipelines,
         const Case& c, const std::string& path)
      : context_(context), pool_(pool), persistent_(persistent), pipelines_(pipelines), case_(c), path_(path),
        g_(geometry_of(c)), node_(node_of(c)) {
    std::mt19937_64 engine(1234);
    std::normal_distribution<float> normal;
    x_host_.resize(element_count(c.x));
    for (auto& v : x_host_) v = normal(engine);
    w_host_.assign(element_count(c.w), 0.0f);
    if (c.weight == "identity") {  // W[c, 0, k] = (c == k) hann(k): the exported iSTFT kernel
      const int64_t n = c.w[0];
      for (int64_t k = 0; k < n; ++k)
        w_host_[k * n + k] = static_cast<float>(0.5 - 0.5 * std::cos(2 * M_PI * k / n));
    } else {  // PyTorch's default bound 1/sqrt(fan_in)
      const double fan_in = static_cast<double>(element_count(c.w)) / c.w[0];
      std::uniform_real_distribution<float> uniform(-1.0f / std::sqrt(fan_in), 1.0f / std::sqrt(fan_in));
      for (auto& v : w_host_) v = uniform(engine);
    }
    if (c.bias) {
      bias_host_.resize(g_.out_channels);
      for (auto& v : bias_host_) v = normal(engine) * 0.1f;
    }
    x_ = Tensor::upload(context, pool, DType::f32, c.x, x_host_.data());
    w_ = Tensor::upload(context, persistent, DType::f32, c.w, w_host_.data());
    if (c.bias) bias_ = Tensor::upload(context, persistent, DType::f32, {g_.out_channels}, bias_host_.data());
    if (path != "session") y_ = Tensor::empty(pool, DType::f32, g_.output_shape());
    if (path == "session") {
      entry_ = ops::find_op("", node_.op_type, 17);
      if (!entry_) throw std::runtime_error("op not registered: " + node_.op_type);
    }
  }

  // Records one run; the output stays alive until release().
  void record(gpu::CommandRecorder& recorder) {
    const kernels::KernelContext kc{context_, pipelines_, g_tuning};
    if (path_ == "session") {
      ops::OpContext oc{kc, recorder, pool_, persistent_, 17, [&](const ops::Value& v) {
                          return v.device.defined() ? v.device
                                                    : Tensor::upload(recorder, pool_, v.host.dtype(),
                                                                     v.host.shape(), v.host.data());
                        },
                        &node_state_};
      std::vector<ops::Value> inputs(node_.inputs.size());
      inputs[0].device = x_;
      for (size_t i = 1; i < inputs.size(); ++i) {
        const std::vector<float>& host = i == 1 ? w_host_ : bias_host_;
        const Shape shape = i == 1 ? case_.w : Shape{g_.out_channels};
        inputs[i].constant = true;
        if (static_cast<int64_t>(host.size()) > kSessionHostElements) {
          inputs[i].device = i == 1 ? w_ : bias_;
        } else {
          inputs[i].host = HostTensor::from_values<float>(shape, host);
        }
      }
      outputs_.push_back(entry_->record(node_, oc, inputs).at(0).device);
      return;
    }
    conv::ConvOptions options;
    options.per_output_overlap_add = path_ == "overlap_add_per_output";
    options.implicit_nv = path_ == "implicit64" ? 1 : path_ == "implicit128" ? 2 : 0;
    options.implicit_splits = path_ == "implicit_nosplit" ? 1 : 0;
    options.implicit_prefetch = path_ == "implicit_prefetch";
    if (path_ == "implicit_phases") options.implicit_shuffle = false;
    options.path = path_.rfind("implicit", 0) == 0 ? conv::ConvPath::implicit_gemm
                   : path_ == "gemm" ? conv::ConvPath::gemm
                   : path_ == "direct" ? conv::ConvPath::direct
                   : path_.rfind("overlap_add", 0) == 0 ? conv::ConvPath::overlap_add
                                                         : throw std::runtime_error("unknown path " + path_);
    if (!g_.transpose) {
      conv::record_conv(kc, recorder, pool_, g_, x_, w_, bias_, y_, options);
      return;
    }
    conv::ConvTransposeWeights weights;
    weights.w = w_;
    if (options.path == conv::ConvPath::gemm && g_.group == 1) {
      if (!packed_) {
        packed_ = std::make_unique<gemm_packed>(conv::prepack_conv_transpose_weight(kc, persistent_, recorder, w_));
      }
      weights.packed = packed_.get();
    }
    if (options.path == conv::ConvPath::overlap_add) {
      weights.diagonal = conv::windowed_identity_diagonal(case_.w, w_host_);
      if (!weights.diagonal) weights.check_windowed_identity = true;
    }
    conv::record_conv_transpose(kc, recorder, pool_, g_, weights, x_, bias_, y_, options);
  }
  void release() {
    if (!outputs_.empty()) last_ = outputs_.back();
    outputs_.clear();
  }

  std::vector<double> reference() const { return test::reference_conv(g_, x_host_, w_host_, bias_host_); }
  std::vector<float> result() const {
    const Tensor& y = path_ == "session" ? last_ : y_;
    const auto bytes = y.download_bytes(context_);
    std::vector<float> values(bytes.size() / 4);
    std::memcpy(values.data(), bytes.data(), values.size() * 4);
    return values;
  }
  const conv::ConvGeometry& geometry() const { return g_; }

 private:
  using gemm_packed = kernels::gemm::PackedB;
  gpu::Context& context_;
  gpu::BufferPool& pool_;
  gpu::BufferPool& persistent_;
  gpu::PipelineCache& pipelines_;
  Case case_;
  std::string path_;
  conv::ConvGeometry g_;
  Node node_;
  const ops::OpEntry* entry_ = nullptr;
  std::shared_ptr<void> node_state_;
  std::vector<float> x_host_, w_host_, bias_host_;
  Tensor x_, w_, bias_, y_, last_;
  std::vector<Tensor> outputs_;
  std::unique_ptr<gemm_packed> packed_;
};

struct Timing {
  double gpu_ms = NAN, wall_ms = NAN;
  std::vector<gpu::ProfileEntry> dispatches;  // of the median run, by kernel name
};

Timing time_runner(gpu::Context& context, gpu::BufferPool& pool, Runner& runner, int repeats) {
  {  // warm-up (and first run: weights prepacked, pipelines compiled)
    gpu::CommandRecorder recorder(context);
    runner.record(recorder);
    recorder.submit_and_wait();
    runner.release();
  }
  if (repeats > 3) gpu::warm_up_clocks(context, pool, 0.2);  // the case's setup left the GPU idle (not in --quick runs)
  Timing t;
  std::vector<std::pair<double, std::vector<gpu::ProfileEntry>>> gpu;
  for (int r = 0; r < repeats; ++r) {
    gpu::Profiler profiler(context, 1024);
    if (!profiler.available()) break;
    gpu::CommandRecorder recorder(context, &profiler);
    runner.record(recorder);
    recorder.submit_and_wait();
    runner.release();
    gpu.emplace_back(profiler.total_ms(), profiler.entries());
  }
  if (!gpu.empty()) {
    std::sort(gpu.begin(), gpu.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    t.gpu_ms = gpu[gpu.size() / 2].first;
    t.dispatches = gpu[gpu.size() / 2].second;
  }
  gpu::CommandRecorder recorder(context);
  for (int r = 0; r < repeats; ++r) runner.record(recorder);
  const auto start = std::chrono::steady_clock::now();
  recorder.submit_and_wait();
  t.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / repeats;
  runner.release();
  return t;
}

std::string path_label(const std::string& path, const conv::ConvGeometry& g, const Case& c) {
  if (path.rfind("implicit", 0) == 0) {
    const bool shuffle = path != "implicit_phases" && conv::detail::shuffle_applies(g);
    const auto t = conv::detail::choose_implicit_tile(shuffle ? conv::detail::shuffle_geometry(g) : conv::detail::phase_geometry(g),
                                                      path == "implicit64" ? 1 : path == "implicit128" ? 2 : 0,
                                                      path == "implicit_nosplit" ? 1 : 0);
    return fmt::format("{}{} {}x{} k{}{}", path, shuffle ? " shuffle" : "", 8 * t.wg_y, 64 * t.nv, t.bk,
                       t.splits > 1 ? fmt::format(" s{}", t.splits) : "");
  }
  if (path != "session") return path;
  // What the op picks: the geometry's automatic path, with the identity weight's overlap-add; a
  // Conv or ConvTranspose where automatic_takes_implicit runs the implicit GEMM unless the tuning
  // conv.implicit_gemm=0 (or X / Y exceed a binding, not checked here).
  conv::ConvPath p = conv::choose_conv_path(g, c.weight == "identity");
  if (p != conv::ConvPath::overlap_add && conv::automatic_takes_implicit(g) && g_tuning.conv.implicit_gemm)
    p = conv::ConvPath::implicit_gemm;
  const char* names[] = {"auto", "direct", "gemm", "overlap_add", "implicit"};
  return fmt::format("session:{}", names[static_cast<int>(p)]);
}

// bench/conv_cases.txt next to the build folder holding this binary (the checkout travels to the
// GPU machine under another path), else in the source tree it was built from, else from the cwd.
std::string default_cases_path() {
  std::error_code ignored;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ignored);
  for (const std::filesystem::path& candidate :
       {exe.parent_path() / "../bench/conv_cases.txt", std::filesystem::path(ONDA_SOURCE_DIR) / "bench/conv_cases.txt"}) {
    if (!exe.empty() && std::filesystem::exists(candidate)) return candidate.string();
  }
  return "bench/conv_cases.txt";
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, breakdown = false;
  int repeats = 20;
  std::string cases_path = default_cases_path(), only, paths_override;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--breakdown") {
      breakdown = true;
    } else if (arg == "--repeats" && i + 1 < argc) {
      repeats = std::stoi(argv[++i]);
    } else if (arg == "--cases" && i + 1 < argc) {
      cases_path = argv[++i];
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--paths" && i + 1 < argc) {
      paths_override = argv[++i];
    } else if (arg == "--tuning" && i + 1 < argc) {
      ++i;  // tuning_from_args
    } else {
      fmt::print(stderr,
                 "usage: bench_conv [--quick] [--breakdown] [--repeats R] [--cases FILE] [--only SUBSTRING] "
                 "[--paths A,B] "
                 "[--tuning FAMILY.FIELD=VALUE ...]\n");
      return 2;
    }
  }
  if (quick) repeats = std::min(repeats, 3);
  g_tuning = bench::tuning_from_args(argc, argv);
  gpu::Context context;
  gpu::BufferPool pool(context), persistent(context);
  gpu::PipelineCache pipelines(context);
  const std::vector<Case> cases = read_cases(cases_path);
  fmt::print("adapter: {}, repeats {}{}\n", context.adapter_description().name, repeats,
             quick ? ", quick cases checked against float64" : "");
  fmt::print("{:<40} {:<32} {:>10} {:>10} {:>10} {:>10}{}\n", "case", "path", "gpu ms", "GFLOP/s", "GB/s",
             "wall ms", quick ? "     rel L2" : "");
  int failures = 0;
  for (const Case& c : cases) {
    if ((c.set == "quick") != quick || (!only.empty() && c.name.find(only) == std::string::npos)) continue;
    // --paths A,B: these paths for every selected case instead of its line's (sweeps).
    std::vector<std::string> case_paths = c.paths;
    if (!paths_override.empty()) {
      case_paths.clear();
      std::stringstream p(paths_override);
      for (std::string item; std::getline(p, item, ',');) case_paths.push_back(item);
    }
    for (const std::string& path : case_paths) {
      try {
        Runner runner(context, pool, persistent, pipelines, c, path);
        const Timing t = time_runner(context, pool, runner, repeats);
        const auto& g = runner.geometry();
        const double ms = std::isnan(t.gpu_ms) ? t.wall_ms : t.gpu_ms;
        const double bytes = 4.0 * (element_count(c.x) + element_count(g.output_shape()));
        std::string check;
        if (quick) {
          const double e = rel_l2(runner.result(), runner.reference());
          check = fmt::format(" {:>10.2e}", e);
          if (!(e <= 1e-5)) ++failures;
        }
        fmt::print("{:<40} {:<32} {:>10.4f} {:>10.1f} {:>10.1f} {:>10.4f}{}\n", c.name, path_label(path, g, c),
                   t.gpu_ms, dense_flops(g) / (ms * 1e-3) / 1e9, bytes / (ms * 1e-3) / 1e9, t.wall_ms, check);
        if (breakdown) {
          for (const auto& d : t.dispatches)
            fmt::print("{:<52} {:>7.4f} ms  x{}  {}\n", "", d.total_ms, d.count, d.name);
        }
      } catch (const std::exception& e) {
        fmt::print("{:<40} {:<32} failed: {}\n", c.name, path, e.what());
        ++failures;
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
