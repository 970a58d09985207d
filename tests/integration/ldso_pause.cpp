// An LD_AUDIT module for startup_signal_test: the dynamic loader calls la_version before it
// loads any library, so this is the window between execve and diskprobe's .preinit_array.
// It says so on fd DISKPROBE_LDSO_READY and waits for a byte on fd DISKPROBE_LDSO_GO: the
// test sends its signal exactly then, with no timing involved.
#include <link.h>
#include <unistd.h>

#include <cstdlib>

extern "C" unsigned int la_version(unsigned int version) {
  const char* ready = std::getenv("DISKPROBE_LDSO_READY");
  const char* go = std::getenv("DISKPROBE_LDSO_GO");
  if (ready && go) {
    char byte = 'r';
    if (::write(std::atoi(ready), &byte, 1) == 1) {
      while (::read(std::atoi(go), &byte, 1) < 0) {
      }
    }
  }
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}
