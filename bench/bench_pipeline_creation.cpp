// What creating a model's pipelines costs, and what creating them in parallel would save (issue 33's
// first run): the WGSL files a run compiled (`ONDA_DUMP_WGSL=DIR onda run MODEL ...`, the label on
// their first line) are created again, first one by one (createShaderModule, then
// createComputePipeline), then all at once through createComputePipelineAsync, which Dawn hands to
// its worker threads: the calling thread only parses the WGSL. Wall time and CPU time (this thread,
// the whole process) of each, so a loaded machine still shows where the work ran.
//
//   bench_pipeline_creation DIR [ROUNDS] [CACHE_FOLDER]
//
// Each round's texts get a distinct trailing comment, so Dawn's in-process caches never answer; with
// CACHE_FOLDER (Dawn's blob cache on disk, as onda's pipeline cache) a second process with the same
// folder measures the warm case.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/context.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double cpu_ms(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

wgpu::ShaderModule create_module(onda::gpu::Context& context, const std::string& wgsl) {
  wgpu::ShaderSourceWGSL source;
  source.code = wgsl.c_str();
  wgpu::ShaderModuleDescriptor descriptor;
  descriptor.nextInChain = &source;
  return context.device().CreateShaderModule(&descriptor);
}

std::vector<std::string> read_shaders(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().extension() == ".wgsl") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> shaders;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    shaders.push_back(text.str());
  }
  return shaders;
}

// CPU and wall time of one way of creating the pipelines.
struct Timing {
  double wall_ms = 0, module_ms = 0, thread_cpu_ms = 0, process_cpu_ms = 0;
};

Timing create_serially(onda::gpu::Context& context, const std::vector<std::string>& shaders,
                       const std::string& suffix) {
  Timing t;
  const auto start = Clock::now();
  const double thread0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID), process0 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (const std::string& shader : shaders) {
    const std::string wgsl = shader + suffix;
    const auto module_start = Clock::now();
    wgpu::ComputePipelineDescriptor descriptor;
    descriptor.compute.module = create_module(context, wgsl);
    t.module_ms += ms_since(module_start);
    context.device().CreateComputePipeline(&descriptor);
  }
  context.check_errors();
  t.wall_ms = ms_since(start);
  t.thread_cpu_ms = cpu_ms(CLOCK_THREAD_CPUTIME_ID) - thread0;
  t.process_cpu_ms = cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - process0;
  return t;
}

Timing create_in_parallel(onda::gpu::Context& context, const std::vector<std::string>& shaders,
                          const std::string& suffix) {
  Timing t;
  const auto start = Clock::now();
  const double thread0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID), process0 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
  std::vector<wgpu::Future> futures;
  size_t failed = 0;
  for (const std::string& shader : shaders) {
    const std::string wgsl = shader + suffix;
    const auto module_start = Clock::now();
    wgpu::ComputePipelineDescriptor descriptor;
    descriptor.compute.module = create_module(context, wgsl);
    t.module_ms += ms_since(module_start);
    futures.push_back(context.device().CreateComputePipelineAsync(
        &descriptor, wgpu::CallbackMode::WaitAnyOnly,
        [&failed](wgpu::CreatePipelineAsyncStatus status, wgpu::ComputePipeline, wgpu::StringView) {
          failed += status != wgpu::CreatePipelineAsyncStatus::Success;
        }));
  }
  for (const wgpu::Future& future : futures) context.wait(future);
  if (failed > 0) fmt::print("  {} asynchronous pipelines failed\n", failed);
  t.wall_ms = ms_since(start);
  t.thread_cpu_ms = cpu_ms(CLOCK_THREAD_CPUTIME_ID) - thread0;
  t.process_cpu_ms = cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - process0;
  return t;
}

void print_timing(const char* what, int round, size_t count, const Timing& t) {
  fmt::print(
      "round {} {:<9} {} pipelines: wall {:.1f} ms (shader modules {:.1f} ms); CPU this thread {:.1f} ms, "
      "process {:.1f} ms\n",
      round, what, count, t.wall_ms, t.module_ms, t.thread_cpu_ms, t.process_cpu_ms);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_pipeline_creation DIR_OF_WGSL [ROUNDS] [CACHE_FOLDER]\n");
    return 1;
  }
  try {
    onda::gpu::ContextOptions options;
    options.pipeline_cache_folder = std::filesystem::path(argc > 3 ? argv[3] : "");
    onda::gpu::Context context(options);
    const std::vector<std::string> shaders = read_shaders(argv[1]);
    const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 1;
    fmt::print("adapter: {}; {} shaders from {}; pipeline cache: {}\n", context.adapter_description().name,
               shaders.size(), argv[1], argc > 3 ? argv[3] : "none");
    for (int round = 0; round < rounds; ++round) {
      print_timing("serial", round, shaders.size(),
                   create_serially(context, shaders, fmt::format("\n// serial {}\n", round)));
      print_timing("parallel", round, shaders.size(),
                   create_in_parallel(context, shaders, fmt::format("\n// parallel {}\n", round)));
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "bench_pipeline_creation: {}\n", error.what());
    return 1;
  }
  return 0;
}
