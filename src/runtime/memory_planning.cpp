#include "runtime/memory_planning.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "graph/host_ops.h"
#include "graph/liveness.h"
#include "graph/model_error.h"
#include "tensor/dtype.h"

namespace onda::runtime {
namespace {

std::string node_at(const std::vector<StepMark>& marks, uint64_t event) {
  auto after = std::upper_bound(marks.begin(), marks.end(), event,
                                [](uint64_t e, const StepMark& mark) { return e < mark.event; });
  return after == marks.begin() ? std::string("(the run's inputs)") : std::prev(after)->node;
}

std::string mib(uint64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

MemoryPlanOptions memory_plan_options(const wgpu::Limits& limits) {
  MemoryPlanOptions options;
  options.alignment = std::max<uint64_t>(256, limits.minStorageBufferOffsetAlignment);
  options.max_arena_bytes = limits.maxBufferSize / options.alignment * options.alignment;
  return options;
}

ActivationPlan plan_activations(const gpu::AllocationTrace& trace, const std::vector<StepMark>& marks,
                                const wgpu::Limits& limits) {
  std::vector<PlannedBuffer> buffers;
  ActivationPlan result;
  for (const gpu::TracedAllocation& a : trace.allocations) {
    buffers.push_back({a.bytes, a.acquired, std::max(a.released, a.acquired)});
    result.allocation_bytes.push_back(a.bytes);
  }
  const MemoryPlanOptions options = memory_plan_options(limits);
  const MemoryPlan plan = plan_memory(buffers, trace.used_together, options);
  if (std::string problem = check_memory_plan(buffers, trace.used_together, options, plan); !problem.empty())
    throw ModelError("internal: unsound memory plan: " + problem);
  result.arena_bytes = plan.arena_bytes;
  for (const MemoryPlan::Placement& p : plan.placements) result.placements.push_back({p.arena, p.offset});
  result.planned_bytes = plan.total_bytes();
  result.live_peak_bytes = peak_live_bytes(buffers, options.alignment);
  result.peak_node = node_at(marks, peak_live_step(buffers, options.alignment));
  return result;
}

MemoryPlanReport plan_graph_memory(const Graph& graph, const wgpu::Limits& limits) {
  // Steps: 0 the inputs, n + 1 node n, nodes.size() + 1 the outputs (read back after the run).
  const std::vector<ValueLifetime> lifetimes = value_lifetimes(graph);
  std::unordered_map<std::string, size_t> root;  // value -> index of the lifetime holding its bytes
  for (size_t i = 0; i < lifetimes.size(); ++i) root[lifetimes[i].name] = i;
  // A view's output is its input's bytes: one buffer, live as long as either.
  for (const Node& node : graph.nodes) {
    if (!is_view_op(node.op_type) || node.inputs.empty() || node.outputs.empty()) continue;
    auto in = root.find(node.inputs[0]);
    if (in != root.end()) root[node.outputs[0]] = in->second;
  }
  const uint64_t end_step = graph.nodes.size() + 1;
  std::vector<PlannedBuffer> buffers(lifetimes.size());
  std::vector<bool> planned(lifetimes.size(), false);
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    const ValueLifetime& v = lifetimes[i];
    const uint64_t first = v.produced_by == kBeforeFirstNode ? 0 : v.produced_by + 1;
    uint64_t last = v.is_graph_output                    ? end_step
                    : v.last_read_by == kBeforeFirstNode ? first
                                                         : v.last_read_by + 1;
    last = std::max(last, first);
    const size_t r = root.at(v.name);
    if (r != i) {  // a view: extends its root's lifetime
      buffers[r].last = std::max(buffers[r].last, last);
      continue;
    }
    const ValueInfo* info = graph.find_value(v.name);
    if (!info || !info->dtype || !info->shape || !info->has_static_shape()) continue;
    int64_t numel = 1;
    for (int64_t d : *info->shape) numel *= d;
    // Small index tensors are shape arithmetic, evaluated on the host.
    const bool index = *info->dtype == DType::i64 || *info->dtype == DType::i32;
    if (index && numel <= 65536) continue;
    const uint64_t bytes = std::max<uint64_t>((numel * device_element_size(*info->dtype) + 15) / 16 * 16, 16);
    buffers[i] = {bytes, first, std::max(buffers[i].last, last)};
    planned[i] = true;
  }
  // Views that extended a root before the root's own entry was written keep the larger end.
  std::vector<size_t> index_of(lifetimes.size(), SIZE_MAX);
  std::vector<PlannedBuffer> kept;
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    if (!planned[i]) continue;
    index_of[i] = kept.size();
    kept.push_back(buffers[i]);
  }
  // A node's outputs are bound with each other and with its inputs (two inputs only read may share
  // an arena, as in the traced plan: gpu::BufferPool::mark_step).
  std::vector<std::pair<size_t, size_t>> together;
  const auto planned_of = [&](const std::vector<std::string>& names) {
    std::vector<size_t> found;
    for (const std::string& name : names) {
      auto r = root.find(name);
      if (r != root.end() && index_of[r->second] != SIZE_MAX) found.push_back(index_of[r->second]);
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return found;
  };
  for (const Node& node : graph.nodes) {
    const std::vector<size_t> written = planned_of(node.outputs);
    std::vector<size_t> read = planned_of(node.inputs);
    std::erase_if(read, [&](size_t i) { return std::binary_search(written.begin(), written.end(), i); });
    for (size_t a = 0; a < written.size(); ++a) {
      for (size_t b = a + 1; b < written.size(); ++b) together.emplace_back(written[a], written[b]);
      for (size_t r : read) together.emplace_back(std::min(written[a], r), std::max(written[a], r));
    }
  }
  const MemoryPlanOptions options = memory_plan_options(limits);
  const MemoryPlan plan = plan_memory(kept, together, options);
  if (std::string problem = check_memory_plan(kept, together, options, plan); !problem.empty())
    throw ModelError("internal: unsound memory plan: " + problem);
  MemoryPlanReport report;
  report.activation_bytes = plan.total_bytes();
  report.live_peak_bytes = peak_live_bytes(kept, options.alignment);
  report.arenas = plan.arena_bytes.size();
  report.values = kept.size();
  const uint64_t step = peak_live_step(kept, options.alignment);
  report.peak_node = step == 0                   ? "(the inputs)"
                     : step > graph.nodes.size() ? "(the outputs)"
                                                 : graph.nodes[step - 1].describe();
  for (const auto& [name, tensor] : graph.initializers)
    report.weight_bytes += static_cast<uint64_t>(tensor.numel()) * device_element_size(tensor.dtype());
  return report;
}

void check_memory_limit(uint64_t limit, uint64_t activation_bytes, uint64_t weight_bytes,
                        const std::string& node, const std::string& what) {
  if (limit == 0 || activation_bytes + weight_bytes <= limit) return;
  throw ModelError(
      fmt::format("memory_limit of {} bytes ({}) cannot hold {}: {} bytes needed ({} of activations, {} of "
                  "weights), the peak at {}",
                  limit, mib(limit), what, activation_bytes + weight_bytes, mib(activation_bytes),
                  mib(weight_bytes), node));
}

}  // namespace onda::runtime
