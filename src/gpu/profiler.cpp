#include "gpu/profiler.h"

#include <algorithm>
#include <cstring>

#include "gpu/buffer_pool.h"
#include "gpu/gpu_error.h"

namespace onda::gpu {

Profiler::Profiler(Context& context, uint32_t capacity) : context_(context), capacity_(capacity) {
  if (!context.has(Feature::TimestampQuery)) return;
  wgpu::QuerySetDescriptor descriptor;
  descriptor.label = "onda profiler";
  descriptor.type = wgpu::QueryType::Timestamp;
  descriptor.count = 2 * capacity;
  query_set_ = context.device().CreateQuerySet(&descriptor);
  const uint64_t bytes = uint64_t{2} * capacity * sizeof(uint64_t);
  resolve_buffer_ = create_buffer(context, bytes, wgpu::BufferUsage::QueryResolve | wgpu::BufferUsage::CopySrc,
                                  "onda profiler resolve");
  readback_buffer_ = create_buffer(context, bytes, wgpu::BufferUsage::MapRead | wgpu::BufferUsage::CopyDst,
                                   "onda profiler readback");
}

bool Profiler::next_pair(const std::string& name, uint32_t* begin_index) {
  if (!available() || pending_names_.size() >= capacity_) return false;
  *begin_index = static_cast<uint32_t>(2 * pending_names_.size());
  pending_names_.push_back(name);
  return true;
}

void Profiler::resolve(const wgpu::CommandEncoder& encoder) {
  if (pending_names_.empty()) return;
  const uint32_t count = static_cast<uint32_t>(2 * pending_names_.size());
  encoder.ResolveQuerySet(query_set_, 0, count, resolve_buffer_, 0);
  encoder.CopyBufferToBuffer(resolve_buffer_, 0, readback_buffer_, 0, uint64_t{count} * sizeof(uint64_t));
  resolved_ = true;
}

void Profiler::collect() {
  if (!resolved_) return;
  const size_t bytes = 2 * pending_names_.size() * sizeof(uint64_t);
  bool mapped = false;
  context_.wait(readback_buffer_.MapAsync(
      wgpu::MapMode::Read, 0, bytes, wgpu::CallbackMode::WaitAnyOnly,
      [&mapped](wgpu::MapAsyncStatus status, wgpu::StringView) { mapped = status == wgpu::MapAsyncStatus::Success; }));
  if (!mapped) throw GpuError("could not map the profiler's timestamps");
  std::vector<uint64_t> stamps(2 * pending_names_.size());
  std::memcpy(stamps.data(), readback_buffer_.GetConstMappedRange(0, bytes), bytes);
  readback_buffer_.Unmap();
  for (size_t i = 0; i < pending_names_.size(); ++i) {
    auto& entry = totals_[pending_names_[i]];
    entry.name = pending_names_[i];
    const uint64_t begin = stamps[2 * i], end = stamps[2 * i + 1];
    entry.total_ms += end > begin ? static_cast<double>(end - begin) * 1e-6 : 0.0;  // nanoseconds
    entry.count += 1;
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

void Profiler::clear() { totals_.clear(); }

}  // namespace onda::gpu
