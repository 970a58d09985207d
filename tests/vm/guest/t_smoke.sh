#!/bin/bash
. "$(dirname "$0")/lib.sh"
"$dp" --version
"$dp" devices
dd if=/dev/urandom of=/dev/vdc bs=4k count=1 seek=100 oflag=direct
