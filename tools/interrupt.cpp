#include "interrupt.h"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace onda::cli {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

extern "C" void on_signal(int signal) {
  g_signal.store(signal);
}

}  // namespace

Interrupted::Interrupted(int signal)
    : std::runtime_error(fmt::format("interrupted by {}: stopped at a segment boundary, no partial file left",
                                     signal == SIGINT    ? "SIGINT"
                                     : signal == SIGTERM ? "SIGTERM"
                                                         : "a signal")),
      signal_(signal) {}

void install_interrupt_handlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal: the default action (stop now)
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void stop_if_interrupted() {
  if (const int signal = g_signal.load()) throw Interrupted(signal);
}

}  // namespace onda::cli
