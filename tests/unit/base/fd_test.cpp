// Fd::open: O_NOATIME where the kernel takes it, without it where it does not.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "diskprobe/base/fd.h"

using namespace diskprobe;

namespace {

// What a process that owns nothing gets from Fd::open(path, O_RDONLY | O_NOATIME): 0 opened
// without O_NOATIME, 1 open failed, 2 opened with O_NOATIME kept (the kernel refuses that to a
// non-owner, so it cannot happen), 3 the plain open(2) was not refused (nothing tested), 4 the
// process could not drop root. Root forks and becomes nobody first.
int open_as_non_owner(const std::string& path) {
  auto attempt = [&]() -> int {
    int raw = ::open(path.c_str(), O_RDONLY | O_NOATIME | O_CLOEXEC);
    if (raw >= 0 || errno != EPERM) {
      if (raw >= 0) ::close(raw);
      return 3;
    }
    auto fd = Fd::open(path, O_RDONLY | O_NOATIME);
    if (!fd) return 1;
    return (::fcntl(fd->get(), F_GETFL) & O_NOATIME) ? 2 : 0;
  };
  if (geteuid() != 0) return attempt();
  pid_t pid = fork();
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(4);
    _exit(attempt());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 5;
}

// A file of the caller's own in a directory anyone may enter, both removed with it.
struct TempFile {
  char dir[32] = "/tmp/diskprobe-fd-XXXXXX";
  std::string path;
  TempFile() {
    REQUIRE(mkdtemp(dir) != nullptr);
    REQUIRE(::chmod(dir, 0755) == 0);
    path = std::string(dir) + "/file";
    REQUIRE(Fd::open(path, O_WRONLY | O_CREAT, 0644));
  }
  ~TempFile() {
    ::unlink(path.c_str());
    ::rmdir(dir);
  }
};

}  // namespace

TEST_CASE("Fd::open keeps O_NOATIME on a file of the caller's own", "[fd]") {
  TempFile own;
  auto fd = Fd::open(own.path, O_RDONLY | O_NOATIME);
  REQUIRE(fd);
  CHECK((::fcntl(fd->get(), F_GETFL) & O_NOATIME) != 0);
}

// Regression: diskprobe opens its target with O_NOATIME (no touch_atime per read, as fio); a
// user who may read a device or file but does not own it must still be able to run.
TEST_CASE("Fd::open drops O_NOATIME where the kernel refuses it (EPERM: not the file's owner)", "[fd]") {
  TempFile file;
  // Run as a user other than root, the file is the caller's own: take one it does not own.
  const std::string target = geteuid() == 0 ? file.path : "/etc/passwd";
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  if (geteuid() != 0 && st.st_uid == geteuid()) {
    WARN(target << " is the caller's own: not tested");
  } else {
    CHECK(open_as_non_owner(target) == 0);
  }
  // Other errors are not retried away: a missing file is still an error, named.
  auto missing = Fd::open(std::string(file.dir) + "/missing", O_RDONLY | O_NOATIME);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().find("missing") != std::string::npos);
}
