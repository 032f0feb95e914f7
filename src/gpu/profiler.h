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
  explicit Profiler(Context& context, uint32_t capacity = 2048);  // WebGPU allows at most 4096 queries per set

  bool available() const { return static_cast<bool>(query_set_); }

  // Reserves the next begin/end query pair for a dispatch called `name`; false when full.
  bool next_pair(const std::string& name, uint32_t* begin_index);
  const wgpu::QuerySet& query_set() const { return query_set_; }

  // Records the resolve of all queries used so far into `encoder`.
  void resolve(const wgpu::CommandEncoder& encoder);
  // After the submit: reads the timestamps back and adds them to the totals.
  void collect();

  // Totals per name, most expensive first.
  std::vector<ProfileEntry> entries() const;
  double total_ms() const;
  void clear();

 private:
  Context& context_;
  uint32_t capacity_;
  wgpu::QuerySet query_set_;
  wgpu::Buffer resolve_buffer_;
  wgpu::Buffer readback_buffer_;
  std::vector<std::string> pending_names_;
  bool resolved_ = false;
  std::map<std::string, ProfileEntry> totals_;
};

}  // namespace onda::gpu
