// `onda run model.onnx ...`: runs a model on .npy inputs (or random ones, or an ONNX test data set),
// writes .npy outputs, reports load time, run times, peak GPU memory and, with --profile, GPU time per
// op; with --test-data, checks the outputs against the set's expected ones.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>

#include "commands.h"
#include "onda/npy.h"
#include "onda/ops.h"
#include "onda/session.h"
#include "roofline_report.h"  // the profile's roofline section
#include "test_data.h"

namespace onda::cli {
namespace {

struct RunArguments {
  std::string model;
  std::vector<std::string> inputs;  // name=path.npy
  std::vector<std::string> shapes;  // name=d0,d1,...
  bool random_inputs = false;
  std::string output_dir;
  int bench = 0;
  bool profile = false;
  std::string profile_csv;  // every profiled node as CSV (implies profile)
  bool timings = false;  // where the first run's recording went, in detail
  std::string adapter;
  uint32_t first_submit = SessionOptions{}.first_submit_dispatches;
  uint64_t max_binding_bytes = 0;
  uint64_t memory_limit = 0;        // SessionOptions::memory_limit
  bool plan_memory = false;         // print the memory plan of the input shapes, run nothing
  std::vector<std::string> tuning;  // "family.field=value" (SessionOptions::tuning)
  std::string test_data;            // an ONNX test data set folder
  double rtol = 1e-3, atol = 1e-7;  // ONNX's backend test defaults
};

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* flag) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument(fmt::format("{} expects NAME=VALUE, got '{}'", flag, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// "1,2,343980" -> {1, 2, 343980}; names the bad value of `text` otherwise.
Shape parse_dims(const std::string& dims, const std::string& text) {
  Shape shape;
  size_t pos = 0;
  while (pos <= dims.size()) {
    const size_t comma = dims.find(',', pos);
    const std::string d = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int64_t value = -1;
    const auto [end, error] = std::from_chars(d.data(), d.data() + d.size(), value);
    if (d.empty() || error != std::errc() || end != d.data() + d.size() || value < 0)
      throw std::invalid_argument(
          fmt::format("--shape {}: '{}' is not a dimension (give sizes >= 0 separated by commas)", text, d));
    shape.push_back(value);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shape;
}

// Names given with --input / --shape must be the model's inputs; the error lists them.
void check_input_name(const std::string& name, const char* flag, const std::vector<TensorSpec>& specs) {
  std::string names;
  for (const auto& spec : specs) {
    if (spec.name == name) return;
    names += fmt::format("{}'{}'", names.empty() ? "" : ", ", spec.name);
  }
  throw std::invalid_argument(fmt::format("{} {}: the model has no input '{}' (its inputs: {})", flag, name,
                                          name, names.empty() ? "none" : names));
}

std::string file_name_for(const std::string& tensor_name) {
  std::string s = tensor_name;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  }
  return s;
}

HostTensor random_tensor(DType dtype, const Shape& shape, std::mt19937_64& rng) {
  const int64_t n = shape_numel(shape);
  if (is_float(dtype)) {
    std::normal_distribution<double> dist(0.0, 0.1);
    std::vector<double> v(n);
    for (auto& x : v) x = dist(rng);
    return HostTensor::from_double(dtype, shape, v);
  }
  std::uniform_int_distribution<int64_t> dist(0, 1);
  std::vector<int64_t> v(n);
  for (auto& x : v) x = dist(rng);
  return HostTensor::from_int64(dtype, shape, v);
}

std::string bytes_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / (1 << 10));
}

void print_memory(const RunStats& stats) {
  fmt::print("peak GPU memory: {} = activations {} at peak + weights {} ({} buffers created)\n",
             bytes_text(stats.peak_gpu_bytes), bytes_text(stats.peak_activation_bytes),
             bytes_text(stats.weight_bytes), stats.buffers_allocated);
  if (stats.planned_activation_bytes > 0)
    fmt::print("memory plan: activation arenas {} (most bytes live at once {})\n",
               bytes_text(stats.planned_activation_bytes), bytes_text(stats.live_activation_bytes));
}

// Arguments first: a typo fails before the model loads. Returns the --shape values by input name.
std::map<std::string, Shape> check_arguments(const RunArguments& a) {
  std::map<std::string, Shape> shapes;
  for (const auto& s : a.shapes) {
    auto [name, dims] = split_assignment(s, "--shape");
    shapes[name] = parse_dims(dims, s);
  }
  std::error_code ec;
  for (const auto& s : a.inputs) {
    const std::string path = split_assignment(s, "--input").second;
    if (!std::filesystem::is_regular_file(path, ec))
      throw std::invalid_argument(fmt::format("--input {}: no file '{}'", s, path));
  }
  if (!a.test_data.empty() && !std::filesystem::is_directory(a.test_data, ec))
    throw std::invalid_argument(fmt::format("--test-data {}: no such folder", a.test_data));
  if (!a.output_dir.empty() && std::filesystem::exists(a.output_dir, ec) &&
      !std::filesystem::is_directory(a.output_dir, ec))
    throw std::invalid_argument(fmt::format("--output-dir {}: a file is in the way", a.output_dir));
  if (!a.profile_csv.empty()) {
    const std::filesystem::path folder = std::filesystem::absolute(a.profile_csv).parent_path();
    if (!std::filesystem::is_directory(folder, ec) || std::filesystem::is_directory(a.profile_csv, ec))
      throw std::invalid_argument(fmt::format("--profile-csv {}: no folder '{}' to write it in, or a folder in the way",
                                              a.profile_csv, folder.string()));
  }
  if (a.bench < 0) throw std::invalid_argument(fmt::format("--bench {}: give a count >= 0", a.bench));
  if (!(a.rtol >= 0) || !(a.atol >= 0))
    throw std::invalid_argument(fmt::format("--rtol {} / --atol {}: give tolerances >= 0", a.rtol, a.atol));
  return shapes;
}

std::unique_ptr<Session> open_session(const RunArguments& a) {
  const auto load_start = std::chrono::steady_clock::now();
  SessionOptions options;
  options.adapter = a.adapter;
  options.profile = a.profile;
  options.first_submit_dispatches = a.first_submit;
  options.max_storage_binding_bytes = a.max_binding_bytes;
  options.memory_limit = a.memory_limit;
  options.tuning = a.tuning;
  auto session = Session::open(a.model, options);
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
  fmt::print("adapter: {}\nmodel:   {} (loaded in {:.1f} ms)\n", session->adapter_name(), a.model, load_ms);
  return session;
}

// Every model input: from the test data set, then --input files, then random values (--random-inputs)
// of the model's shape or the --shape given for it.
std::map<std::string, HostTensor> gather_inputs(const RunArguments& a, const Session& session,
                                                const TestDataSet& test_data,
                                                std::map<std::string, Shape> shapes) {
  std::map<std::string, HostTensor> inputs = test_data.inputs;
  for (const auto& [name, shape] : shapes) check_input_name(name, "--shape", session.inputs());
  for (const auto& s : a.inputs) {
    auto [name, path] = split_assignment(s, "--input");
    check_input_name(name, "--input", session.inputs());
    inputs[name] = read_npy(path);
  }
  std::mt19937_64 rng(1234);
  for (const auto& spec : session.inputs()) {
    if (inputs.count(spec.name)) continue;
    if (!a.random_inputs)
      throw std::invalid_argument(fmt::format(
          "no value for input '{}' (use --input {}=FILE.npy or --random-inputs)", spec.name, spec.name));
    Shape shape = shapes.count(spec.name) ? shapes[spec.name] : spec.shape;
    for (int64_t d : shape) {
      if (d < 0)
        throw std::invalid_argument(
            fmt::format("input '{}' has a dynamic shape {}: give --shape {}=d0,d1,...", spec.name,
                        shape_to_string(spec.shape), spec.name));
    }
    inputs[spec.name] = random_tensor(spec.dtype, shape, rng);
  }
  return inputs;
}

// --test-data: each output against the set's expected one; throws when any differs.
void check_against_test_data(const RunArguments& a, const TestDataSet& test_data,
                             const std::map<std::string, HostTensor>& outputs) {
  const std::vector<OutputCheck> checks = check_outputs(test_data.expected, outputs, a.rtol, a.atol);
  size_t failed = 0;
  for (const OutputCheck& c : checks) {
    fmt::print(
        "check {}: {} (rel L2 {:.2e}, max |diff| {:.2e}, worst |diff| / (atol + rtol |ref|) {:.3g}){}\n",
        c.name, c.passed ? "ok" : "FAILED", c.rel_l2, c.max_abs, c.worst, c.passed ? "" : ": " + c.problem);
    failed += !c.passed;
  }
  if (checks.empty()) fmt::print("check: the test data set has no output_N.pb to compare with\n");
  if (failed) {
    throw std::runtime_error(
        fmt::format("{} of {} outputs differ from {}", failed, checks.size(), a.test_data));
  }
}

// --bench N: N more runs, timed unprofiled; with --profile, one more profiled run for the report.
void bench_runs(const RunArguments& a, Session& session, const std::map<std::string, HostTensor>& inputs,
                std::map<std::string, HostTensor>& outputs) {
  session.set_profiling(false);
  std::vector<double> times, records, waits;
  for (int i = 0; i < a.bench; ++i) {
    outputs = session.run(inputs);  // the files written later are the last run's
    times.push_back(session.last_run().wall_ms);
    records.push_back(session.last_run().record_ms);
    waits.push_back(session.last_run().gpu_wait_ms);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::sort(times.begin(), times.end());
  const double wall = median(times), record = median(records);
  fmt::print("runs: {}  min {:.3f} ms  median {:.3f} ms  max {:.3f} ms\n", a.bench, times.front(), wall,
             times.back());
  fmt::print("last run ");
  print_memory(session.last_run());
  // With chunked submits the GPU runs while later chunks are recorded: wall is about recording plus
  // the wait after the last submit, and a long wait means the GPU, not the CPU, sets the pace.
  fmt::print(
      "median run: recording {:.3f} ms ({:.0f}% of wall), last submit to GPU done {:.3f} ms, {} dispatches "
      "in {} submits\n",
      record, wall > 0 ? 100 * record / wall : 0.0, median(waits), session.last_run().dispatches,
      session.last_run().submits);
  if (a.profile) {
    std::vector<std::pair<std::string, double>> by_op(session.last_run().record_ms_by_op.begin(),
                                                      session.last_run().record_ms_by_op.end());
    std::sort(by_op.begin(), by_op.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    fmt::print("CPU recording per op type (last timed run):");
    for (size_t i = 0; i < std::min<size_t>(8, by_op.size()); ++i)
      fmt::print(" {} {:.2f} ms;", by_op[i].first, by_op[i].second);
    fmt::print("\n");
    // One more run, profiled (per-dispatch timestamps slow a run down), for the report.
    session.set_profiling(true);
    outputs = session.run(inputs);
  }
}

// --profile: GPU time per op type and the top nodes of the last (profiled) run, then the roofline.
void print_profile(const RunStats& run) {
  const auto& profile = run.profile;
  std::map<std::string, std::pair<double, uint64_t>> by_type;
  double total = 0;
  for (const auto& p : profile) {
    by_type[p.op_type].first += p.gpu_ms;
    by_type[p.op_type].second += p.dispatches;
    total += p.gpu_ms;
  }
  std::vector<std::pair<std::string, std::pair<double, uint64_t>>> types(by_type.begin(), by_type.end());
  std::sort(types.begin(), types.end(),
            [](const auto& x, const auto& y) { return x.second.first > y.second.first; });
  fmt::print("GPU time per op type (last run, {:.3f} ms of kernels):\n", total);
  // Idle gaps: the GPU waiting between dispatches (host recording, submits, dependencies), from
  // the same profiled run; each of its dispatches has its own pass, so the gaps include pass
  // boundaries and overstate an unprofiled run's.
  const double span = run.profile_span_ms;
  if (span > 0) {
    fmt::print("GPU span of the profiled run {:.3f} ms: kernels {:.3f} ms, idle gaps {:.3f} ms ({:.0f}%)\n",
               span, total, std::max(0.0, span - total), 100 * std::max(0.0, span - total) / span);
  }
  for (const auto& [type, t] : types) {
    fmt::print("  {:<24} {:>10.3f} ms {:>6.1f}% {:>7} dispatches\n", type, t.first,
               total > 0 ? 100 * t.first / total : 0.0, t.second);
  }
  fmt::print("top nodes:\n");
  for (size_t i = 0; i < std::min<size_t>(15, profile.size()); ++i) {
    fmt::print("  {:<24} {:>10.3f} ms  {}  {}\n", profile[i].op_type, profile[i].gpu_ms, profile[i].node,
               profile[i].input_shapes);
  }
  print_roofline(run);
}

void write_outputs(const std::string& output_dir, const std::map<std::string, HostTensor>& outputs) {
  std::filesystem::create_directories(output_dir);
  for (const auto& [name, tensor] : outputs) {
    const auto path = std::filesystem::path(output_dir) / (file_name_for(name) + ".npy");
    write_npy(path, tensor);
    fmt::print("wrote {} {} {}\n", path.string(), dtype_name(tensor.dtype()),
               shape_to_string(tensor.shape()));
  }
}

// --plan-memory: a dry run, the plan from the input shapes alone (graph values; kernels' scratch not
// included).
void print_memory_plan(Session& session, const std::map<std::string, Shape>& shapes) {
  std::map<std::string, std::vector<int64_t>> plan_shapes(shapes.begin(), shapes.end());
  const MemoryPlanReport plan = session.plan_memory(plan_shapes);
  fmt::print(
      "memory plan (not run): activations {} in {} arenas for {} values, most bytes live at once {} at "
      "{}; weights {}; total {}\n",
      bytes_text(plan.activation_bytes), plan.arenas, plan.values, bytes_text(plan.live_peak_bytes),
      plan.peak_node, bytes_text(plan.weight_bytes), bytes_text(plan.activation_bytes + plan.weight_bytes));
}

// Where the first run's recording went: creating pipelines (most of a first run, also with a warm
// pipeline cache) and bind groups, the plan, the weights' uploads; with --profile, by op type and the
// slowest nodes too.
void print_first_run(const RunStats& first, bool detailed) {
  const auto by_op = [&](const char* name) {
    const auto it = first.record_ms_by_op.find(name);
    return it == first.record_ms_by_op.end() ? 0.0 : it->second;
  };
  fmt::print(
      "first run recording: {} pipelines created in {:.2f} ms (WGSL rendered {:.2f} ms, "
      "shader modules "
      "{:.2f} ms, "
      "pipelines {:.2f} ms; {} made ahead from the manifest, waited for {:.2f} ms; pipeline cache entries "
      "read {}, written {}), {} bind groups in {:.2f} ms, {} buffers created in {:.2f} ms ({} of them held "
      "across runs), graph plan {:.2f} ms, weights upload {:.2f} ms\n",
      first.pipelines_created,
      first.wgsl_render_ms + first.shader_module_ms + first.pipeline_create_ms +
          first.pipeline_prefetch_wait_ms,
      first.wgsl_render_ms, first.shader_module_ms, first.pipeline_create_ms, first.pipelines_prefetched,
      first.pipeline_prefetch_wait_ms, first.pipeline_cache_loads, first.pipeline_cache_stores,
      first.bind_groups_created, first.bind_group_create_ms, first.buffers_allocated + first.held_buffers_allocated,
      first.buffer_create_ms, first.held_buffers_allocated, by_op("(graph plan)"), by_op("(weights)"));
  if (!detailed) return;
  std::vector<std::pair<std::string, double>> ops(first.record_ms_by_op.begin(), first.record_ms_by_op.end());
  std::sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  fmt::print("first run recording per op type:");
  for (size_t i = 0; i < std::min<size_t>(12, ops.size()); ++i)
    fmt::print(" {} {:.1f} ms;", ops[i].first, ops[i].second);
  fmt::print("\n");
  std::vector<std::pair<std::string, double>> nodes(first.slow_node_record_ms.begin(),
                                                    first.slow_node_record_ms.end());
  std::sort(nodes.begin(), nodes.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  double slow_total = 0;
  for (const auto& node : nodes) slow_total += node.second;
  fmt::print("first run: {} nodes recorded in over 0.5 ms each, {:.1f} ms together; slowest:\n", nodes.size(),
             slow_total);
  for (size_t i = 0; i < std::min<size_t>(10, nodes.size()); ++i)
    fmt::print("  {:>10.2f} ms  {}\n", nodes[i].second, nodes[i].first);
}

void run(const RunArguments& a) {
  std::map<std::string, Shape> shapes = check_arguments(a);
  auto session = open_session(a);
  if (a.plan_memory) return print_memory_plan(*session, shapes);
  TestDataSet test_data;
  if (!a.test_data.empty()) test_data = read_test_data(a.test_data, session->inputs(), session->outputs());
  const std::map<std::string, HostTensor> inputs = gather_inputs(a, *session, test_data, std::move(shapes));

  auto outputs = session->run(inputs);
  const RunStats first = session->last_run();
  fmt::print("first run: {:.2f} ms ({} dispatches, recording {:.2f} ms)\n", first.wall_ms, first.dispatches,
             first.record_ms);
  print_first_run(first, a.profile || a.timings);
  print_memory(first);
  if (!a.test_data.empty()) check_against_test_data(a, test_data, outputs);
  if (a.bench > 0) bench_runs(a, *session, inputs, outputs);
  if (a.profile) print_profile(session->last_run());
  if (!a.profile_csv.empty()) write_profile_csv(session->last_run(), a.profile_csv);
  if (!a.output_dir.empty()) write_outputs(a.output_dir, outputs);
}

}  // namespace

void add_ops_command(CLI::App& app) {
  auto* command = app.add_subcommand("ops", "List the ONNX ops onda runs on the GPU");
  auto markdown = std::make_shared<bool>(false);
  command->add_flag("--markdown", *markdown, "Print docs/supported-ops.md");
  command->callback([markdown] {
    if (*markdown) {
      fmt::print("{}", supported_ops_markdown());
      return;
    }
    for (const auto& op : supported_ops())
      fmt::print("{:<24} opset {:>2}+  {}\n", op.op_type, op.first_opset, op.notes);
  });
}

void add_run_command(CLI::App& app) {
  auto* command = app.add_subcommand("run", "Run an ONNX model on the GPU with .npy inputs and outputs");
  auto a = std::make_shared<RunArguments>();
  command->add_option("model", a->model, "The .onnx file")->required();
  command->add_option("--input", a->inputs, "NAME=FILE.npy for a graph input (repeatable)");
  command->add_option("--shape", a->shapes, "NAME=d0,d1,... shape of a random input with dynamic dims");
  command->add_flag("--random-inputs", a->random_inputs, "Random values for inputs without --input");
  command->add_option("--output-dir", a->output_dir, "Write every output as DIR/<name>.npy");
  command->add_option("--bench", a->bench,
                      "Time N more runs after the first (min/median/max); outputs are the last run's");
  command->add_flag("--profile", a->profile, "GPU time per kernel through timestamp queries");
  command->add_option("--profile-csv", a->profile_csv,
                      "With --profile: every node's GPU time and floor as CSV in FILE (the report shows the top ones)");
  command->add_flag(
      "--timings", a->timings,
      "Where the first run's recording went: by op type and the slowest nodes (also with --profile)");
  command->add_option(
      "--test-data", a->test_data,
      "An ONNX test data set (DIR/input_N.pb, output_N.pb): its inputs, then a check of the outputs");
  command->add_option("--rtol", a->rtol, "--test-data: relative tolerance per element")
      ->capture_default_str();
  command->add_option("--atol", a->atol, "--test-data: absolute tolerance per element")
      ->capture_default_str();
  command->add_option("--adapter", a->adapter, "Adapter index or name substring");
  command
      ->add_option("--first-submit", a->first_submit,
                   "Dispatches in the first of a run's growing submits (0: one submit per run)")
      ->capture_default_str();
  command->add_option("--tuning", a->tuning,
                      "A kernel tuning override, family.field=value (e.g. rnn.step_kernel=vec4); repeatable");
  command->add_option(
      "--max-binding-bytes", a->max_binding_bytes,
      "Largest storage binding to use (>= 65536; 0: the adapter's), as on an adapter with smaller "
      "bindings: the kernels split their work, the outputs stay the same");
  command->add_option(
      "--memory-limit", a->memory_limit,
      "GPU memory a run may use, weights included, in bytes (0: no limit); a memory plan that "
      "needs more fails naming the node at its peak");
  command->add_flag("--plan-memory", a->plan_memory,
                    "Print the static memory plan for the input shapes (--shape) without running the model");
  command->callback([a] {
    if (!a->profile_csv.empty()) a->profile = true;
    run(*a);
  });
}

}  // namespace onda::cli
