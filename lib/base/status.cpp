#include "diskprobe/base/status.h"

#include <cstring>

namespace diskprobe {

std::string errno_message(std::string_view what, std::string_view where, int err) {
  std::string s(what);
  s += '(';
  s += where;
  s += "): ";
  s += std::strerror(err);
  return s;
}

}  // namespace diskprobe
