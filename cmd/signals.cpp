// SIGINT/SIGTERM/SIGHUP: the flag a run and `tune --apply` stop on.
#include <signal.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "commands.h"
#include "stop_signals.h"

namespace diskprobe::cli {

namespace {

std::atomic<bool> g_stop{false};
volatile sig_atomic_t g_signal = 0;


void on_signal(int sig) {
  g_signal = sig;
  g_stop.store(true);
}

// SIGINT/SIGTERM/SIGHUP only set a flag: the run stops at its next batch and unwinds, so
// every RestoreGuard and the scratch device are cleaned up by their destructors. Installed
// from .preinit_array (below), before any library's constructor and main. The launcher
// (launcher.cpp) blocked them at the first instruction, before the dynamic loader; blocked
// here too (run without the launcher: the window of the loader stays open), then unblocked,
// so nothing diskprobe starts inherits them blocked. One left pending (in the loader, or
// blocked by the parent across exec) is delivered to the handler then. SIGPIPE is ignored: a
// closed pipe is a write error (EPIPE) with a message.
void install_signal_handlers() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : cli::kStopSignals) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_mask = stop_signals;
  sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns EINTR and sees the flag
  for (int sig : cli::kStopSignals) sigaction(sig, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
}
__attribute__((section(".preinit_array"), used)) void (*const install_early)() = install_signal_handlers;

}  // namespace

const std::atomic<bool>& stop_flag() { return g_stop; }

// The stop signals blocked while the flag is looked at, and unblocked only inside
// sigsuspend(): one arriving between the look and the sleep stays pending and ends the
// sleep, where `while (!flag) pause();` slept on until another came.
void wait_for_stop() {
  sigset_t stop_signals, during;
  sigemptyset(&stop_signals);
  for (int sig : cli::kStopSignals) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, &during);
  sigset_t waiting = during;
  for (int sig : cli::kStopSignals) sigdelset(&waiting, sig);
  while (!g_stop.load()) sigsuspend(&waiting);
  sigprocmask(SIG_SETMASK, &during, nullptr);
}

std::string stopped_by() { return std::string("interrupted by ") + strsignal(g_signal); }

}  // namespace diskprobe::cli
