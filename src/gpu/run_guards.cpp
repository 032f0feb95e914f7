#include "gpu/run_guards.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "gpu/context.h"
#include "gpu/gpu_error.h"

namespace onda::gpu {

void RunGuards::guard(CommandRecorder& recorder, const wgpu::Buffer& buffer, uint64_t byte_offset,
                      const std::string& what) {
  uint32_t slot = 0;
  {
    std::lock_guard lock(mutex_);
    if (!words_) {
      wgpu::BufferDescriptor desc{};
      desc.label = "onda run guards";
      desc.size = kSlots * 4;
      desc.usage = BufferPool::kStorageUsage;
      words_ = context_.device().CreateBuffer(&desc);  // zero-initialised, as WebGPU guarantees
    }
    const auto it = std::find(what_.begin(), what_.end(), what);
    if (it != what_.end()) {
      slot = static_cast<uint32_t>(it - what_.begin());
    } else if (what_.size() < kSlots) {
      slot = static_cast<uint32_t>(what_.size());
      what_.push_back(what);
    } else {
      slot = kSlots - 1;
      what_.back() = "one of several kernels (more than " + std::to_string(kSlots) + " guarded)";
    }
  }
  recorder.copy(buffer, byte_offset, words_, uint64_t{slot} * 4, 4);
}

bool RunGuards::any() const {
  std::lock_guard lock(mutex_);
  return !what_.empty();
}

PendingDownload RunGuards::begin_check(CommandRecorder& recorder) {
  std::lock_guard lock(mutex_);
  return PendingDownload(context_, recorder, words_, 0, what_.size() * 4);
}

void RunGuards::finish_check(const std::vector<uint8_t>& words) {
  std::string failed;
  {
    std::lock_guard lock(mutex_);
    const size_t count = std::min(words.size() / 4, what_.size());
    const uint32_t zero = 0;
    for (size_t i = 0; i < count; ++i) {
      uint32_t word = 0;
      std::memcpy(&word, words.data() + 4 * i, 4);
      if (word == 0) continue;
      if (failed.empty()) failed = what_[i];
      context_.queue().WriteBuffer(words_, i * 4, &zero, 4);
    }
  }
  if (!failed.empty()) throw GpuError(failed);
}

void RunGuards::check() {
  if (!any()) return;
  CommandRecorder recorder(context_);
  PendingDownload pending = begin_check(recorder);
  recorder.submit();
  finish_check(pending.finish(context_));
}

}  // namespace onda::gpu
