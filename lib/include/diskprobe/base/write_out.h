// Writing a report out: every byte, or an error that says why (ENOSPC, EPIPE, a closed
// stdout) — never a short write that looks like success.
#pragma once

#include <string>
#include <string_view>

#include "diskprobe/base/status.h"

namespace diskprobe {

// write(2) until every byte is out; EINTR retried. `what` names the destination in the error.
Status write_fd(int fd, std::string_view text, const std::string& what);
// Creates or truncates `path`, writes all of `text`, fsyncs (a full disk may only say so
// there) and checks close.
Status write_file(const std::string& path, std::string_view text, unsigned mode = 0644);
Status write_stdout(std::string_view text);

// A descriptor 0-2 closed at exec would be handed to the next file the process opens (the
// device, a journal) and the report written into it: each closed one gets /dev/null, opened
// read-only, so a write to a closed stdout fails with EBADF instead.
void guard_std_fds();

}  // namespace diskprobe
