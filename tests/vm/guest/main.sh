#!/bin/bash
# Runs in the guest, chrooted into the host's root: lays the disks out once (setup.sh),
# then each script named in DP_TESTS (t_NAME for a test); NAME.log, NAME.rc and NAME.time go to DP_OUT.
here=$(cd "$(dirname "$0")" && pwd)
# The host's /lib/modules is not this kernel's (and the root is read-only): modprobe looks
# in the cache the kernel came from.
mkdir -p /run/vm-bin
printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$DP_MODROOT" > /run/vm-bin/modprobe
chmod +x /run/vm-bin/modprobe
export PATH=/run/vm-bin:$PATH
run() {  # name script
  local start=$SECONDS
  echo "guest: $(cut -d' ' -f1 /proc/uptime) s: $1" > /dev/console
  bash "$2" > "$DP_OUT/$1.log" 2>&1
  echo $? > "$DP_OUT/$1.rc"
  echo $((SECONDS - start)) > "$DP_OUT/$1.time"
}
run setup "$here/setup.sh"
[ "$(cat "$DP_OUT/setup.rc")" = 0 ] || exit 1
for s in ${DP_TESTS//,/ }; do run "${s#t_}" "$here/$s.sh"; done
