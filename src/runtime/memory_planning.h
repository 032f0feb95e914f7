// The runtime's side of the static memory plan (graph/memory_plan.h): from a traced run's tensor
// allocations (gpu/buffer_pool.h) to arenas and placements the pool follows in later runs; and the
// planning-only dry run over a graph's values (Session::plan_memory, SessionOptions::memory_limit).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpu/buffer_pool.h"
#include "graph/graph.h"
#include "graph/memory_plan.h"
#include "onda/session.h"

namespace onda::runtime {

// The node (by name) that was being walked at each allocation event from `event` on.
struct StepMark {
  uint64_t event = 0;
  std::string node;
};

struct ActivationPlan {
  std::vector<uint64_t> arena_bytes;
  std::vector<uint64_t> allocation_bytes;  // per traced allocation
  std::vector<gpu::ArenaPlacement> placements;
  uint64_t planned_bytes = 0;  // the arenas' total
  uint64_t live_peak_bytes = 0;
  std::string peak_node;
};

// Alignment (minStorageBufferOffsetAlignment, at least 256) and the largest arena (maxBufferSize).
MemoryPlanOptions memory_plan_options(const wgpu::Limits& limits);

// Plans the traced allocations; checks the plan (check_memory_plan) and throws ModelError
// ("internal: ...") if it is unsound. `marks`: ascending events with the node walked from then on.
ActivationPlan plan_activations(const gpu::AllocationTrace& trace, const std::vector<StepMark>& marks,
                                const wgpu::Limits& limits);

// The graph's values (static shapes only) planned without running: views (Reshape, Squeeze, ...)
// share their input's bytes; a node's outputs are bound with each other and with its inputs.
MemoryPlanReport plan_graph_memory(const Graph& simplified, const wgpu::Limits& limits);

// ModelError when `needed` bytes (activations + weights) exceed a non-zero `limit`: one line naming
// the node at the peak and the bytes.
void check_memory_limit(uint64_t limit, uint64_t activation_bytes, uint64_t weight_bytes,
                        const std::string& node, const std::string& what);

}  // namespace onda::runtime
