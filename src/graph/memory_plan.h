// A static memory plan: every buffer of a run (an activation, a kernel's scratch) gets an offset in
// one of a few large arenas, computed once per input shape from the buffers' sizes and lifetimes, so
// a run needs about as much memory as the most bytes it ever holds at once (no size classes, no
// fragmentation between classes). Greedy as TFLite's and ONNX Runtime's planners: the largest
// buffers are placed first, each in the smallest gap left free by the buffers it overlaps in time
// (best fit), else at the arena's end, else in a new arena; planned again with the lowest gap that
// fits instead (first fit), in other orders (the largest bytes x steps first, the earliest first,
// random restarts that reorder buffers of similar sizes), and the smallest of the plans kept.
//
// WebGPU forbids one buffer bound read-only and writable in the same dispatch, and kernels tell
// tensors apart by their buffer: buffers a dispatch binds together ("conflicts") therefore go to
// different arenas (only while both are live: buffers never live at once are never bound
// together). Pure planning, no GPU: the runtime feeds it buffers traced from one run
// (gpu/buffer_pool.h) or the values of a graph (plan_graph_memory, for a planning-only dry run).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace onda {

struct PlannedBuffer {
  uint64_t bytes = 0;
  // Live over the steps [first, last] (inclusive): two buffers whose ranges meet may not overlap.
  uint64_t first = 0, last = 0;
};

struct MemoryPlanOptions {
  // Every offset is a multiple of this (minStorageBufferOffsetAlignment) and every size rounded up
  // to it, so a tensor's binding starts at its own first byte.
  uint64_t alignment = 256;
  // No arena grows past this (maxBufferSize); a buffer larger than it cannot be planned.
  uint64_t max_arena_bytes = std::numeric_limits<uint64_t>::max();
};

struct MemoryPlan {
  struct Placement {
    size_t arena = 0;
    uint64_t offset = 0;
  };
  std::vector<Placement> placements;  // per buffer, in the order given
  std::vector<uint64_t> arena_bytes;  // each arena's size

  uint64_t total_bytes() const;
};

// `conflicts`: pairs of buffer indices that must not share an arena. Throws std::invalid_argument
// for a buffer larger than max_arena_bytes or a lifetime with last < first.
MemoryPlan plan_memory(const std::vector<PlannedBuffer>& buffers,
                       const std::vector<std::pair<size_t, size_t>>& conflicts,
                       const MemoryPlanOptions& options);

// The most bytes (each rounded up to `alignment`) live at one step: no plan needs less.
uint64_t peak_live_bytes(const std::vector<PlannedBuffer>& buffers, uint64_t alignment);
// The step at which peak_live_bytes is reached (the first such step).
uint64_t peak_live_step(const std::vector<PlannedBuffer>& buffers, uint64_t alignment);

// Empty when `plan` is sound for `buffers`; else one line naming what is wrong: two buffers live at
// once whose byte ranges in one arena overlap, a conflicting pair live at once sharing an arena, a
// misaligned offset, or a buffer past its arena's end.
std::string check_memory_plan(const std::vector<PlannedBuffer>& buffers,
                              const std::vector<std::pair<size_t, size_t>>& conflicts,
                              const MemoryPlanOptions& options, const MemoryPlan& plan);

}  // namespace onda
