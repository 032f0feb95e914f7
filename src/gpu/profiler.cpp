#include "gpu/profiler.h"

#include <algorithm>
#include <cstring>

#include "gpu/buffer_pool.h"
#include "gpu/gpu_error.h"

namespace onda::gpu {

Profiler::Profiler(Context& context, uint32_t pairs_per_set, uint32_t max_pairs)
    : context_(context), available_(context.has(Feature::TimestampQuery)), pairs_per_set_(pairs_per_set), max_pairs_(max_pairs) {}

bool Profiler::next_pair(const std::string& name, wgpu::QuerySet* set, uint32_t* begin_index) {
  if (!available_ || pending_names_.size() >= max_pairs_) return false;
  const size_t chunk = pending_names_.size() / pairs_per_set_;
  if (chunk == chunks_.size()) {
    QueryChunk c;
    wgpu::QuerySetDescriptor descriptor;
    descriptor.label = "onda profiler";
    descriptor.type = wgpu::QueryType::Timestamp;
    descriptor.count = 2 * pairs_per_set_;
    c.query_set = context_.device().CreateQuerySet(&descriptor);
    const uint64_t bytes = uint64_t{2} * pairs_per_set_ * sizeof(uint64_t);
    c.resolve_buffer = create_buffer(context_, bytes, wgpu::BufferUsage::QueryResolve | wgpu::BufferUsage::CopySrc,
                                     "onda profiler resolve");
    c.readback_buffer = create_buffer(context_, bytes, wgpu::BufferUsage::MapRead | wgpu::BufferUsage::CopyDst,
                                      "onda profiler readback");
    chunks_.push_back(std::move(c));
  }
  *set = chunks_[chunk].query_set;
  *begin_index = static_cast<uint32_t>(2 * (pending_names_.size() % pairs_per_set_));
  pending_names_.push_back(name);
  return true;
}

void Profiler::resolve(const wgpu::CommandEncoder& encoder) {
  for (size_t first = 0, chunk = 0; first < pending_names_.size(); first += pairs_per_set_, ++chunk) {
    const uint32_t count = static_cast<uint32_t>(2 * std::min<size_t>(pairs_per_set_, pending_names_.size() - first));
    encoder.ResolveQuerySet(chunks_[chunk].query_set, 0, count, chunks_[chunk].resolve_buffer, 0);
    encoder.CopyBufferToBuffer(chunks_[chunk].resolve_buffer, 0, chunks_[chunk].readback_buffer, 0,
                               uint64_t{count} * sizeof(uint64_t));
    resolved_ = true;
  }
}

void Profiler::collect() {
  if (!resolved_) return;
  for (size_t first = 0, chunk = 0; first < pending_names_.size(); first += pairs_per_set_, ++chunk) {
    const size_t pairs = std::min<size_t>(pairs_per_set_, pending_names_.size() - first);
    const size_t bytes = 2 * pairs * sizeof(uint64_t);
    const wgpu::Buffer& readback = chunks_[chunk].readback_buffer;
    bool mapped = false;
    context_.wait(readback.MapAsync(
        wgpu::MapMode::Read, 0, bytes, wgpu::CallbackMode::WaitAnyOnly,
        [&mapped](wgpu::MapAsyncStatus status, wgpu::StringView) { mapped = status == wgpu::MapAsyncStatus::Success; }));
    if (!mapped) throw GpuError("could not map the profiler's timestamps");
    std::vector<uint64_t> stamps(2 * pairs);
    std::memcpy(stamps.data(), readback.GetConstMappedRange(0, bytes), bytes);
    readback.Unmap();
    for (size_t i = 0; i < pairs; ++i) {
      const std::string& name = pending_names_[first + i];
      auto& entry = totals_[name];
      entry.name = name;
      const uint64_t begin = stamps[2 * i], end = stamps[2 * i + 1];
      entry.total_ms += end > begin ? static_cast<double>(end - begin) * 1e-6 : 0.0;  // nanoseconds
      entry.count += 1;
      if (end > begin) first_begin_ = std::min(first_begin_, begin), last_end_ = std::max(last_end_, end);
    }
  }
  pending_names_.clear();
  resolved_ = false;
}

std::vector<ProfileEntry> Profiler::entries() const {
  std::vector<ProfileEntry> result;
  for (const auto& [name, entry] : totals_) result.push_back(entry);
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) { return a.total_ms > b.total_ms; });
  return result;
}

double Profiler::total_ms() const {
  double total = 0;
  for (const auto& [name, entry] : totals_) total += entry.total_ms;
  return total;
}

double Profiler::span_ms() const {
  return last_end_ > first_begin_ ? static_cast<double>(last_end_ - first_begin_) * 1e-6 : 0.0;
}

void Profiler::clear() {
  totals_.clear();
  first_begin_ = UINT64_MAX;
  last_end_ = 0;
}

}  // namespace onda::gpu
