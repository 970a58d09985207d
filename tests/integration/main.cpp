// Integration tests need root and loop devices; without them they skip (exit 77 for ctest).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "diskprobe/device/loop_device.h"

int main(int argc, char* argv[]) {
  std::string why;
  if (!diskprobe::loop_devices_available(&why)) {
    std::fprintf(stderr, "SKIP: %s\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
