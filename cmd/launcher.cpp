// /usr/bin/diskprobe: blocks the stop signals at the first instruction, then execs the real
// binary (DISKPROBE_REAL_BINARY, relative to this one), which unblocks them once its
// handlers are in. diskprobe is dynamic: the kernel starts ld.so, which loads the libraries
// for milliseconds before diskprobe's .preinit_array runs, and a SIGHUP then killed it by the
// default action. The mask survives execve where handlers do not. A launcher rather than
// -static-pie: Debian has no static spdlog/fmt, and the sanitizer build (which cannot be
// static) keeps the launcher too. A signal that arrives during the execve system call itself
// still takes the default action: no user code runs before _start.
// No libc: a static executable of a few raw system calls, so nothing runs before _start.
#include <signal.h>
#include <sys/syscall.h>

#include "stop_signals.h"

#if !defined(__x86_64__)
#error "the launcher is written for x86_64; CMake builds diskprobe without it elsewhere"
#endif

namespace {

constexpr char kRealBinary[] = DISKPROBE_REAL_BINARY;

long sys(long n, long a, long b = 0, long c = 0, long d = 0) {
  long r;
  register long r10 asm("r10") = d;
  asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return r;
}

long length(const char* s) {
  long n = 0;
  while (s[n]) ++n;
  return n;
}

// "diskprobe: error: WHAT PATH (errno N): HINT" on stderr, then exit 127 as a shell does.
[[noreturn]] void die(const char* what, const char* path, long err, const char* hint) {
  char num[24];
  int i = sizeof num;
  num[--i] = 0;
  do num[--i] = static_cast<char>('0' + err % 10); while ((err /= 10) > 0 && i > 0);
  const char* parts[] = {"diskprobe: error: ", what, path, " (errno ", num + i, "): ", hint, "\n"};
  for (const char* s : parts) sys(SYS_write, 2, reinterpret_cast<long>(s), length(s));
  sys(SYS_exit_group, 127);
  __builtin_unreachable();
}

}  // namespace

extern "C" [[noreturn]] void launch(long* sp) {
  char** argv = reinterpret_cast<char**>(sp + 1);
  char** envp = argv + sp[0] + 1;
  unsigned long mask = 0;
  for (int s : diskprobe::cli::kStopSignals) mask |= 1ul << (s - 1);
  sys(SYS_rt_sigprocmask, SIG_BLOCK, reinterpret_cast<long>(&mask), 0, sizeof mask);
  static char path[4096 + sizeof kRealBinary];
  long n = sys(SYS_readlink, reinterpret_cast<long>("/proc/self/exe"), reinterpret_cast<long>(path), 4096);
  if (n <= 0 || n >= 4096) die("cannot read ", "/proc/self/exe", n < 0 ? -n : 0, "is /proc mounted?");
  while (n > 0 && path[n - 1] != '/') --n;
  for (const char* p = kRealBinary; *p; ++p) path[n++] = *p;
  path[n] = 0;
  long err = sys(SYS_execve, reinterpret_cast<long>(path), reinterpret_cast<long>(argv), reinterpret_cast<long>(envp));
  die("cannot start ", path, -err, "reinstall diskprobe");
}

// The kernel enters here with the stack holding argc, argv[], 0, envp[], 0.
asm(R"(.text
.globl _start
.type _start, @function
_start:
  xor %ebp, %ebp
  mov %rsp, %rdi
  and $-16, %rsp
  call launch
  hlt
)");
