#include "gpu/buffer_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>

#include "gpu/gpu_error.h"

namespace onda::gpu {

wgpu::Buffer create_buffer(Context& context, uint64_t size, wgpu::BufferUsage usage, const char* label) {
  const uint64_t max_size = context.limits().maxBufferSize;
  if (size > max_size) {
    throw DeviceLimitError(
        fmt::format("buffer '{}' of {} bytes exceeds the device's maxBufferSize of {} bytes ({})", label,
                    size, max_size, context.adapter_description().name));
  }
  wgpu::BufferDescriptor descriptor;
  descriptor.label = label;
  descriptor.size = (size + 3) & ~uint64_t{3};  // WebGPU copies and writes work in 4-byte units
  descriptor.usage = usage;
  wgpu::Buffer buffer;
  std::string error = context.capture_error(wgpu::ErrorFilter::OutOfMemory,
                                            [&] { buffer = context.device().CreateBuffer(&descriptor); });
  if (!error.empty()) {
    throw OutOfMemoryError(
        fmt::format("out of GPU memory allocating buffer '{}' of {} bytes ({:.1f} MiB) on {}: {}", label,
                    size, static_cast<double>(size) / (1 << 20), context.adapter_description().name, error));
  }
  return buffer;
}

PooledBuffer::~PooledBuffer() {
  auto pool = pool_.lock();
  if (!pool) return;
  std::lock_guard lock(pool->mutex);
  if (trace_id_ != kNotTraced && epoch_ == pool->epoch && pool->tracing &&
      trace_id_ < pool->trace.allocations.size()) {
    TracedAllocation& traced = pool->trace.allocations[trace_id_];
    traced.released = pool->trace.events++;
    traced.released_yet = true;
  }
  if (planned_) {
    // The arena's bytes stay counted as a whole (install_plan); only the range goes back.
    if (epoch_ == pool->epoch) {
      const size_t arena = pool->placements[trace_id_].arena;
      pool->ranges_on_loan[arena].erase(offset_);
    }
    return;
  }
  pool->stats.bytes_in_use -= size_;
  pool->free_by_size[size_].push_back(std::move(buffer_));
}

uint64_t BufferPool::size_class(uint64_t size) {
  if (size <= 256) return 256;
  if (size <= 65536) return (size + 255) & ~uint64_t{255};
  // Eight classes per power of two above 64 KiB.
  const uint64_t step = std::bit_floor(size - 1) / 8;
  return (size + step - 1) / step * step;
}

std::shared_ptr<PooledBuffer> BufferPool::acquire(uint64_t size) {
  uint64_t capacity = 0;
  wgpu::Buffer buffer = take(size, capacity);
  return std::make_shared<PooledBuffer>(std::move(buffer), capacity, state_);
}

wgpu::Buffer BufferPool::take(uint64_t size, uint64_t& capacity_out) {
  const uint64_t max_size = context_.limits().maxBufferSize & ~uint64_t{3};
  if (size > max_size) {
    throw DeviceLimitError(
        fmt::format("a buffer of {} bytes exceeds the device's maxBufferSize of {} bytes ({})", size,
                    context_.limits().maxBufferSize, context_.adapter_description().name));
  }
  const uint64_t capacity = std::min(size_class(size), max_size);
  wgpu::Buffer buffer;
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->free_by_size.find(capacity);
    if (it != state_->free_by_size.end() && !it->second.empty()) {
      buffer = std::move(it->second.back());
      it->second.pop_back();
    }
  }
  if (!buffer) {
    const auto start = std::chrono::steady_clock::now();
    try {
      buffer = create_pooled(capacity);
    } catch (const OutOfMemoryError&) {
      // Cached buffers of other sizes may be what stands in the way; recorded work may still use them.
      if (before_trim_) before_trim_();
      trim();
      buffer = create_pooled(capacity);
    }
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    std::lock_guard lock(state_->mutex);
    state_->stats.bytes_allocated += capacity;
    state_->stats.allocations += 1;
    state_->stats.create_ms += took.count();
  }
  std::lock_guard lock(state_->mutex);
  state_->stats.bytes_in_use += capacity;
  state_->stats.peak_bytes_in_use = std::max(state_->stats.peak_bytes_in_use, state_->stats.bytes_in_use);
  capacity_out = capacity;
  return buffer;
}

std::vector<std::shared_ptr<PooledBuffer>> BufferPool::claim(std::span<const wgpu::Buffer> buffers) {
  std::vector<std::shared_ptr<PooledBuffer>> loans;
  std::lock_guard lock(state_->mutex);
  for (const wgpu::Buffer& wanted : buffers) {
    if (!wanted) continue;
    auto it = state_->free_by_size.find(wanted.GetSize());
    if (it == state_->free_by_size.end()) continue;
    auto& free = it->second;
    auto found = std::find_if(free.begin(), free.end(),
                              [&](const wgpu::Buffer& b) { return b.Get() == wanted.Get(); });
    if (found == free.end()) continue;  // not this pool's, on loan already, or claimed by an earlier entry
    wgpu::Buffer buffer = std::move(*found);
    free.erase(found);
    state_->stats.bytes_in_use += it->first;
    state_->stats.peak_bytes_in_use = std::max(state_->stats.peak_bytes_in_use, state_->stats.bytes_in_use);
    loans.push_back(std::make_shared<PooledBuffer>(std::move(buffer), it->first, state_));
  }
  return loans;
}

std::shared_ptr<PooledBuffer> BufferPool::acquire_tensor(uint64_t size) {
  {
    std::lock_guard lock(state_->mutex);
    BufferPoolState& s = *state_;
    if (!s.placements.empty() && !s.plan_diverged) {
      const size_t index = s.next_planned++;
      if (index < s.placements.size() && s.planned_bytes[index] == size) {
        const ArenaPlacement& at = s.placements[index];
        auto& loaned = s.ranges_on_loan[at.arena];
        // Never hand out bytes that are on loan: the next range must start at or after our end,
        // the previous must end at or before our start.
        auto next = loaned.lower_bound(at.offset);
        const bool free_after = next == loaned.end() || next->first >= at.offset + size;
        const bool free_before = next == loaned.begin() || std::prev(next)->second <= at.offset;
        if (free_after && free_before) {
          loaned.emplace(at.offset, at.offset + size);
          return std::make_shared<PooledBuffer>(s.arenas[at.arena], size, state_, at.offset, index, true,
                                                s.epoch);
        }
      }
      s.plan_diverged = true;  // from here on this run allocates as if there were no plan
    }
  }
  uint64_t capacity = 0;
  wgpu::Buffer buffer = take(size, capacity);
  std::lock_guard lock(state_->mutex);
  BufferPoolState& s = *state_;
  size_t id = PooledBuffer::kNotTraced;
  if (s.tracing) {
    id = s.trace.allocations.size();
    s.trace.allocations.push_back({size, s.trace.events++, 0, false});
    s.step_allocations.push_back(id);
  }
  return std::make_shared<PooledBuffer>(std::move(buffer), capacity, state_, 0, id, false, s.epoch);
}

void BufferPool::begin_trace() {
  std::lock_guard lock(state_->mutex);
  state_->tracing = true;
  state_->trace = {};
  state_->step_allocations.clear();
  ++state_->epoch;
}

void BufferPool::mark_step(std::span<const PooledBuffer* const> read,
                           std::span<const PooledBuffer* const> written) {
  std::lock_guard lock(state_->mutex);
  BufferPoolState& s = *state_;
  if (!s.tracing) return;
  const auto ids = [&](std::span<const PooledBuffer* const> loans, std::vector<size_t> into) {
    for (const PooledBuffer* loan : loans)
      if (loan && loan->trace_id() != PooledBuffer::kNotTraced &&
          loan->trace_id() < s.trace.allocations.size())
        into.push_back(loan->trace_id());
    std::sort(into.begin(), into.end());
    into.erase(std::unique(into.begin(), into.end()), into.end());
    return into;
  };
  const std::vector<size_t> writes = ids(written, s.step_allocations);
  std::vector<size_t> reads = ids(read, {});
  // Read and written (an op that writes into its input): counted once, as written.
  std::erase_if(reads, [&](size_t id) { return std::binary_search(writes.begin(), writes.end(), id); });
  for (size_t a = 0; a < writes.size(); ++a) {
    for (size_t b = a + 1; b < writes.size(); ++b) s.trace.used_together.emplace_back(writes[a], writes[b]);
    for (size_t r : reads) s.trace.used_together.emplace_back(std::min(writes[a], r), std::max(writes[a], r));
  }
  s.step_allocations.clear();
}

AllocationTrace BufferPool::end_trace() {
  std::lock_guard lock(state_->mutex);
  BufferPoolState& s = *state_;
  s.tracing = false;
  for (TracedAllocation& a : s.trace.allocations) {
    if (!a.released_yet) a.released = s.trace.events;  // held past the run (outputs): live to the end
  }
  ++s.epoch;
  std::sort(s.trace.used_together.begin(), s.trace.used_together.end());
  s.trace.used_together.erase(std::unique(s.trace.used_together.begin(), s.trace.used_together.end()),
                              s.trace.used_together.end());
  return std::move(s.trace);
}

void BufferPool::install_plan(const std::vector<uint64_t>& arena_bytes,
                              std::vector<uint64_t> allocation_bytes,
                              std::vector<ArenaPlacement> placements) {
  drop_plan();
  std::vector<wgpu::Buffer> arenas;
  uint64_t total = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t bytes : arena_bytes) {
    arenas.push_back(
        create_buffer(context_, std::max<uint64_t>(bytes, 4), kStorageUsage, "onda activation arena"));
    total += arenas.back().GetSize();
  }
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  std::lock_guard lock(state_->mutex);
  BufferPoolState& s = *state_;
  s.stats.create_ms += took.count();
  ++s.epoch;
  s.arenas = std::move(arenas);
  s.planned_bytes = std::move(allocation_bytes);
  s.placements = std::move(placements);
  s.ranges_on_loan.assign(s.arenas.size(), {});
  s.next_planned = 0;
  s.plan_diverged = false;
  s.arena_bytes = total;
  s.stats.bytes_allocated += total;
  s.stats.bytes_in_use += total;
  s.stats.peak_bytes_in_use = std::max(s.stats.peak_bytes_in_use, s.stats.bytes_in_use);
}

void BufferPool::begin_planned_run() {
  std::lock_guard lock(state_->mutex);
  state_->next_planned = 0;
  state_->plan_diverged = false;
}

void BufferPool::drop_plan() {
  std::lock_guard lock(state_->mutex);
  BufferPoolState& s = *state_;
  if (s.arenas.empty() && s.placements.empty()) return;
  ++s.epoch;
  s.stats.bytes_allocated -= s.arena_bytes;
  s.stats.bytes_in_use -= s.arena_bytes;
  s.arenas.clear();  // loans still out hold their arena's buffer
  s.planned_bytes.clear();
  s.placements.clear();
  s.ranges_on_loan.clear();
  s.arena_bytes = 0;
}

bool BufferPool::tracing() const {
  std::lock_guard lock(state_->mutex);
  return state_->tracing;
}

uint64_t BufferPool::trace_events() const {
  std::lock_guard lock(state_->mutex);
  return state_->trace.events;
}

bool BufferPool::has_plan() const {
  std::lock_guard lock(state_->mutex);
  return !state_->placements.empty();
}

bool BufferPool::plan_diverged() const {
  std::lock_guard lock(state_->mutex);
  return state_->plan_diverged;
}

uint64_t BufferPool::arena_bytes() const {
  std::lock_guard lock(state_->mutex);
  return state_->arena_bytes;
}

void BufferPool::trim() {
  std::lock_guard lock(state_->mutex);
  for (auto& [size, buffers] : state_->free_by_size) {
    for (auto& buffer : buffers) buffer.Destroy();
    state_->stats.bytes_allocated -= size * buffers.size();
    buffers.clear();
  }
}

wgpu::Buffer BufferPool::create_pooled(uint64_t capacity) {
  if (device_bytes_limit_ > 0) {
    uint64_t allocated = 0;
    {
      std::lock_guard lock(state_->mutex);
      allocated = state_->stats.bytes_allocated;  // arenas included
    }
    if (allocated + capacity > device_bytes_limit_) {
      throw OutOfMemoryError(
          fmt::format("out of GPU memory allocating buffer 'onda pooled buffer' of {} bytes: {} of the "
                      "pool's emulated {} "
                      "bytes are allocated",
                      capacity, allocated, device_bytes_limit_));
    }
  }
  return create_buffer(context_, capacity, kStorageUsage, "onda pooled buffer");
}

BufferPoolStats BufferPool::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

void BufferPool::reset_peak() {
  std::lock_guard lock(state_->mutex);
  state_->stats.peak_bytes_in_use = state_->stats.bytes_in_use;
}

}  // namespace onda::gpu
