// Health words: how a kernel reports, after the fact, a failure only the GPU can see. Today one kernel
// needs it: the cooperative recurrent kernel, whose workgroups wait for each other and give up after a
// bounded number of spins when its grid was not resident at once after all (another process on the
// GPU, say), leaving NaN outputs and a flag word set (kernels/rnn/rnn_sequence_cooperative.wgsl).
// After such a dispatch the kernel records a copy of its flag word into a guard slot (guard()); whoever
// owns the run reads the slots back after it (begin_check + finish_check along with the outputs, or
// check() at once) and a non-zero slot becomes a GpuError saying what failed. The copies are commands,
// so a CommandTape replays them with the run, and every run rewrites its slots.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/dawn.h"
#include "gpu/transfer.h"

namespace onda::gpu {

class Context;
class CommandRecorder;

class RunGuards {
 public:
  // Distinct guard texts; later ones share the last slot (and its text says so).
  static constexpr uint32_t kSlots = 256;

  explicit RunGuards(Context& context) : context_(context) {}

  // Records, after the work recorded so far, a copy of the 4-byte word at `byte_offset` of `buffer`
  // (0: fine) into the slot of `what` (one slot per distinct text, reused when recorded again).
  void guard(CommandRecorder& recorder, const wgpu::Buffer& buffer, uint64_t byte_offset,
             const std::string& what);
  // Whether any kernel has recorded a guard on this context.
  bool any() const;
  // A readback of the slots, recorded into `recorder` after the run's work.
  PendingDownload begin_check(CommandRecorder& recorder);
  // Throws GpuError naming the first non-zero slot of a begin_check readback, after clearing the
  // non-zero slots (so that a failure is reported once).
  void finish_check(const std::vector<uint8_t>& words);
  // Waits for the work submitted so far, reads the slots and throws as finish_check.
  void check();

 private:
  Context& context_;
  wgpu::Buffer words_;
  std::vector<std::string> what_;
  mutable std::mutex mutex_;
};

}  // namespace onda::gpu
