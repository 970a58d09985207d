// Placeholder filled below.
#include "diskprobe/core/engine.h"
