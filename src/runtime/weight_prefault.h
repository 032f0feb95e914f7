// A model's weights brought into memory on a thread of its own while the session opens and plans
// its first run. Weights of external data are memory-mapped (onnx/external_data.h); the first read
// of each 4 KiB page, which is the first run's upload, otherwise takes a page fault. For HTDemucs'
// 274 MB file in the page cache, copying from a fresh mapping took ~32 ms on a desktop CPU, of
// which the faults were ~17 ms.
#pragma once
#include <atomic>
#include <thread>
#include <vector>

#include "graph/host_tensor.h"

namespace onda::runtime {

class WeightPrefault {
 public:
  // Starts reading `weights`' pages in the order given (the tensors are kept alive until the thread
  // ends).
  explicit WeightPrefault(std::vector<HostTensor> weights);
  // Stops within one chunk of pages and joins: a session closed before its first run waits for
  // little.
  ~WeightPrefault();
  WeightPrefault(const WeightPrefault&) = delete;
  WeightPrefault& operator=(const WeightPrefault&) = delete;

 private:
  void populate();

  std::vector<HostTensor> weights_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace onda::runtime
