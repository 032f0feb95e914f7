// A pool of storage buffers. Buffers are grouped in size classes (256 B steps up to 64 KiB, then
// eight steps per power of two, so at most 12.5% is wasted) and handed back to the pool when the
// last reference drops, so a session that runs the same graph many times allocates only once.
// Allocation failures are caught with an error scope and reported with the size that was asked for.
//
// A static memory plan on top (the runtime's, graph/memory_plan.h): the pool traces the tensor
// allocations of one run (size, lifetime in allocation events, which loans a node uses together),
// the runtime plans offsets in a few arenas from the trace, and later runs of the same plan get the
// i-th tensor allocation at its planned byte range of an arena instead of a buffer of its own. A
// planned range still in use when it is asked for again (an allocation sequence that differs from
// the traced one, an output held across runs) is never handed out twice: that loan falls back to an
// ordinary pooled buffer.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "gpu/context.h"

namespace onda::gpu {

class BufferPool;

// One buffer on loan from the pool; returns itself when destroyed.
class PooledBuffer {
 public:
  PooledBuffer(wgpu::Buffer buffer, uint64_t size, std::weak_ptr<struct BufferPoolState> pool)
      : buffer_(std::move(buffer)), size_(size), pool_(std::move(pool)) {}
  // A byte range of an arena (a planned loan), or a traced whole buffer (`trace_id` set).
  PooledBuffer(wgpu::Buffer buffer, uint64_t size, std::weak_ptr<struct BufferPoolState> pool,
               uint64_t offset, size_t trace_id, bool planned, uint64_t epoch)
      : buffer_(std::move(buffer)),
        size_(size),
        offset_(offset),
        trace_id_(trace_id),
        planned_(planned),
        epoch_(epoch),
        pool_(std::move(pool)) {}
  ~PooledBuffer();
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;

  const wgpu::Buffer& buffer() const { return buffer_; }
  uint64_t size() const { return size_; }      // capacity (the size class), >= the size asked for
  uint64_t offset() const { return offset_; }  // where the loan starts in buffer(): 0 but in an arena
  uint64_t end() const { return offset_ + size_; }
  // The allocation's index in the pool's trace (BufferPool::begin_trace), or kNotTraced.
  static constexpr size_t kNotTraced = static_cast<size_t>(-1);
  size_t trace_id() const { return trace_id_; }

 private:
  wgpu::Buffer buffer_;
  uint64_t size_;
  uint64_t offset_ = 0;
  size_t trace_id_ = kNotTraced;
  bool planned_ = false;
  uint64_t epoch_ = 0;  // the trace or plan it belongs to (BufferPoolState::epoch)
  std::weak_ptr<struct BufferPoolState> pool_;
};

struct BufferPoolStats {
  uint64_t bytes_in_use = 0;  // on loan now
  uint64_t peak_bytes_in_use = 0;
  uint64_t bytes_allocated = 0;  // on loan + cached in the pool
  uint64_t allocations = 0;      // buffers created on the device so far
  double create_ms = 0;          // CPU time in createBuffer for them (a first run's cost)
};

// One traced tensor allocation: its size and lifetime in allocation events (acquire and release
// each count one), and the step (BufferPool::mark_step) it was made in.
struct TracedAllocation {
  uint64_t bytes = 0;
  uint64_t acquired = 0, released = 0;
  bool released_yet = false;
};

struct AllocationTrace {
  std::vector<TracedAllocation> allocations;
  // Pairs of allocations a step used together, at least one of them written (a dispatch may bind
  // them at once, one writable: not one buffer).
  std::vector<std::pair<size_t, size_t>> used_together;
  uint64_t events = 0;
};

// Where each traced allocation lives in a plan: arenas[arena] at offset.
struct ArenaPlacement {
  size_t arena = 0;
  uint64_t offset = 0;
};

struct BufferPoolState {
  std::mutex mutex;
  std::map<uint64_t, std::vector<wgpu::Buffer>> free_by_size;
  BufferPoolStats stats;
  // Tracing (begin_trace .. end_trace).
  bool tracing = false;
  AllocationTrace trace;
  std::vector<size_t> step_allocations;  // traced loans made since the last mark_step
  // The installed plan: its arenas, each allocation's bytes and placement, and the ranges on loan.
  std::vector<wgpu::Buffer> arenas;
  std::vector<uint64_t> planned_bytes;
  std::vector<ArenaPlacement> placements;
  size_t next_planned = 0;
  bool plan_diverged = false;
  std::vector<std::map<uint64_t, uint64_t>> ranges_on_loan;  // per arena: offset -> end
  uint64_t arena_bytes = 0;
  uint64_t epoch = 0;  // counts begin_trace and install_plan/drop_plan: loans of an older one are ignored
};

class BufferPool {
 public:
  static constexpr wgpu::BufferUsage kStorageUsage =
      wgpu::BufferUsage::Storage | wgpu::BufferUsage::CopySrc | wgpu::BufferUsage::CopyDst;

  explicit BufferPool(Context& context) : context_(context) {}

  // A storage buffer of at least `size` bytes. Throws DeviceLimitError above maxBufferSize and
  // OutOfMemoryError when the device cannot allocate it.
  std::shared_ptr<PooledBuffer> acquire(uint64_t size);

  // Takes those of `buffers` that sit in the pool's free lists on loan again (each once), so that
  // the pool hands them to no one else until the returned loans drop: how a replayable run keeps
  // the buffers its commands name (the runtime's run capture; see gpu/command_tape.h).
  std::vector<std::shared_ptr<PooledBuffer>> claim(std::span<const wgpu::Buffer> buffers);

  // A tensor's storage: as acquire(), or its planned range of an arena while a plan is installed.
  std::shared_ptr<PooledBuffer> acquire_tensor(uint64_t size);

  // Records every acquire_tensor from now on (AllocationTrace); end_trace returns the trace, with
  // allocations still on loan released at the end. mark_step(read, written): the traced storages a
  // step only read, those it wrote (its results), and the allocations made since the last mark (its
  // results and scratch, written) were used together: every pair but two only read (storages bound
  // read-only may share a buffer in one dispatch, WebGPU forbids only a read-only and a writable
  // binding of one buffer).
  void begin_trace();
  void mark_step(std::span<const PooledBuffer* const> read, std::span<const PooledBuffer* const> written);
  AllocationTrace end_trace();
  bool tracing() const;
  uint64_t trace_events() const;  // allocation events traced so far

  // Creates the arenas (sizes from a plan of the trace) and hands traced allocation i its placement
  // from then on, starting over at each begin_planned_run(). Throws like acquire() when an arena
  // cannot be allocated. drop_plan() forgets the plan (the arenas go when no loan holds them).
  void install_plan(const std::vector<uint64_t>& arena_bytes, std::vector<uint64_t> allocation_bytes,
                    std::vector<ArenaPlacement> placements);
  void begin_planned_run();
  void drop_plan();
  bool has_plan() const;
  // Whether the last planned run asked for an allocation the plan did not foresee (it fell back).
  bool plan_diverged() const;
  uint64_t arena_bytes() const;

  // Drops every cached (not on loan) buffer. Recorded but unsubmitted commands may still name a cached
  // buffer (kernels' scratch goes back to the pool once its dispatches are recorded): only call this
  // when nothing is pending, or through the out-of-memory path below, which flushes first.
  void trim();
  // What an allocation that ran out of device memory calls before it trims the cache and tries again:
  // the runtime submits the commands recorded so far, after which destroying a cached buffer they use
  // is safe (WebGPU frees it once the submitted work completes). Empty: no pending work to flush.
  void set_before_trim(std::function<void()> flush) { before_trim_ = std::move(flush); }
  // Emulates a device with only `bytes` of memory for this pool's own buffers (0: the device's): a
  // buffer that would take the pool's allocated bytes past it fails as the device's allocation would,
  // with OutOfMemoryError. How the out-of-memory path is tested without exhausting a GPU.
  void set_device_bytes_limit(uint64_t bytes) { device_bytes_limit_ = bytes; }
  BufferPoolStats stats() const;
  void reset_peak();

  static uint64_t size_class(uint64_t size);

 private:
  // A buffer of the size class of `size` from the free lists or the device, counted as on loan.
  wgpu::Buffer take(uint64_t size, uint64_t& capacity);

  wgpu::Buffer create_pooled(uint64_t capacity);

  Context& context_;
  std::shared_ptr<BufferPoolState> state_ = std::make_shared<BufferPoolState>();
  std::function<void()> before_trim_;
  uint64_t device_bytes_limit_ = 0;
};

// Creates one buffer outside the pool, with the out-of-memory check and a clear message.
wgpu::Buffer create_buffer(Context& context, uint64_t size, wgpu::BufferUsage usage, const char* label);

}  // namespace onda::gpu
