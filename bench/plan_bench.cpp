// The graph plan's CPU time per reference model: the part of a first run (and of every new input
// shape) spent simplifying and fusing the loaded graph before anything is recorded (issue 33's
// first-run target: a warm first run within 3x of a steady run). Session::Impl::make_plan's steps
// one by one on the weight-stripped models (weights zero-filled to the recipes' sizes): the copy of
// the loaded graph, simplify_graph, each fusion pass of fusion_passes(), make_walk_plan.
//
//   build/bench_plan [--runs R] [MODEL...]      (default: every reference model found, R = 7)
//
// Prints the median ms of each step over R runs and the whole plan next to it; the steady-state run
// it is compared with is `onda run --bench`'s on the GPU (docs/benchmarks.md, first runs).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "graph/fusion_passes.h"
#include "graph/simplify.h"
#include "reference_graphs.h"
#include "runtime/graph_walk.h"

using namespace onda;

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Step name -> its time in each run, in the order the steps first ran.
struct StepTimes {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> ms;
  void add(const std::string& step, double t) {
    if (!ms.count(step)) order.push_back(step);
    ms[step].push_back(t);
  }
};

void bench_model(const test::fs::path& models, const std::string& name, int runs) {
  const test::TemporaryFolder folder;
  const std::optional<Graph> loaded = test::zero_weight_reference_graph(models, name, folder);
  if (!loaded) {
    fmt::print("{}: not in {}\n", name, models.string());
    return;
  }
  StepTimes times;
  for (int run = 0; run < runs; ++run) {
    const auto whole = std::chrono::steady_clock::now();
    auto start = whole;
    Graph graph = *loaded;
    times.add("copy of the loaded graph", ms_since(start));
    start = std::chrono::steady_clock::now();
    simplify_graph(graph, {});
    times.add("simplify_graph", ms_since(start));
    for (const FusionPass& pass : fusion_passes()) {
      start = std::chrono::steady_clock::now();
      pass.run(graph);
      times.add(pass.name, ms_since(start));
    }
    start = std::chrono::steady_clock::now();
    const size_t nodes = graph.nodes.size();
    runtime::WalkPlan plan = runtime::make_walk_plan(std::move(graph));
    times.add("make_walk_plan", ms_since(start));
    times.add("whole plan", ms_since(whole));
    if (run == 0) fmt::print("{}: {} nodes loaded, {} planned\n", name, loaded->nodes.size(), nodes);
  }
  for (const std::string& step : times.order)
    fmt::print("  {:<28} {:8.2f} ms\n", step, median(times.ms[step]));
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 7;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      names.push_back(arg);
    }
  }
  const std::optional<test::fs::path> models = test::reference_models_dir();
  if (!models) {
    fmt::print(stderr, "bench_plan: no reference models (set ONDA_MODELS_DIR)\n");
    return 1;
  }
  if (names.empty())
    names = {"mpsenet", "vr_hp_wind_inst", "htdemucs6", "scnetlargestarrytong", "mdx23c_vocals", "bsroformer_viperx1297"};
  fmt::print("graph plan, median of {} runs (this machine's CPU)\n", runs);
  for (const std::string& name : names) bench_model(*models, name, runs);
  return 0;
}
