// Ctrl-C and SIGTERM during `onda separate` / `onda enhance`: the first signal only sets a flag, the
// run stops at the next segment boundary (the progress callback throws Interrupted), the writers
// remove their partial files as the exception unwinds, and the command exits 128 + signal (130 for
// SIGINT, 143 for SIGTERM). A second signal gets the default action: an immediate stop.
#pragma once
#include <stdexcept>

namespace onda::cli {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }
  int exit_status() const { return 128 + signal_; }

 private:
  int signal_;
};

void install_interrupt_handlers();
// Throws Interrupted once a signal has arrived.
void stop_if_interrupted();

}  // namespace onda::cli
