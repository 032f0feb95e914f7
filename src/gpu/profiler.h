// GPU time per named dispatch through timestamp queries. When profiling is on, the recorder gives
// each dispatch its own compute pass with begin/end timestamps (timestamps inside passes are an
// experimental feature; per-pass timestamps are core WebGPU). Times are summed per name.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpu/context.h"

namespace onda::gpu {

struct ProfileEntry {
  std::string name;
  double total_ms = 0;
  uint64_t count = 0;
};

class Profiler {
 public:
  // Query sets hold `pairs_per_set` begin/end pairs each (WebGPU allows at most 4096 queries per
  // set); a run with more dispatches gets more sets, up to `max_pairs` in all.
  explicit Profiler(Context& context, uint32_t pairs_per_set = 2048, uint32_t max_pairs = 1 << 16);

  bool available() const { return available_; }

  // Reserves the next begin/end query pair for a dispatch called `name`: its set and the begin
  // index in it (end = begin + 1); false when the budget is spent.
  bool next_pair(const std::string& name, wgpu::QuerySet* set, uint32_t* begin_index);

  // Records the resolve of all queries used so far into `encoder`.
  void resolve(const wgpu::CommandEncoder& encoder);
  // After the submit: reads the timestamps back and adds them to the totals.
  void collect();

  // Totals per name, most expensive first.
  std::vector<ProfileEntry> entries() const;
  double total_ms() const;
  // From the first dispatch's begin to the last one's end over what was collected since clear():
  // minus total_ms(), the GPU's idle gaps between dispatches (0 when nothing was collected). With
  // each dispatch in its own pass, the gaps include the pass boundaries.
  double span_ms() const;
  void clear();

 private:
  struct QueryChunk {
    wgpu::QuerySet query_set;
    wgpu::Buffer resolve_buffer;
    wgpu::Buffer readback_buffer;
  };
  Context& context_;
  bool available_ = false;
  uint32_t pairs_per_set_, max_pairs_;
  std::vector<QueryChunk> chunks_;  // created on demand, kept across runs
  std::vector<std::string> pending_names_;
  bool resolved_ = false;
  std::map<std::string, ProfileEntry> totals_;
  uint64_t first_begin_ = UINT64_MAX, last_end_ = 0;  // nanoseconds, over the collected pairs
};

}  // namespace onda::gpu
