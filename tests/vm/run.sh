#!/usr/bin/env bash
# The QEMU test bed: boots Debian's kernel under TCG with virtio-blk, NVMe, virtio-scsi and
# null_blk, the host's root as the guest's userland (9p, read-only), lays the disks out as
# the ESSD guide's `fdisk -lu` listing (seed 000) and runs guest tests in one boot.
#   tests/vm/run.sh BUILD_DIR [TEST...]     TEST: guest/t_TEST.sh (default: every t_*.sh), or
#                                           guest/TEST.sh (bench: tests/perf/bench.py --vm)
# Exit: 0 every test passed, 1 one failed (its output is printed), 77 no QEMU or kernel here.
# DISKPROBE_VM_CACHE (default /var/cache/diskprobe-vm) keeps the kernel between runs;
# DISKPROBE_VM_WORK (default BUILD_DIR/vm) the disk images, console log and results.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
skip() { echo "vm: SKIP: $*" >&2; exit 77; }

[ $# -ge 1 ] || { echo "usage: tests/vm/run.sh BUILD_DIR [TEST...]" >&2; exit 2; }
build=$(cd "$1" && pwd); shift
diskprobe=$build/cmd/diskprobe
[ -x "$diskprobe" ] || { echo "vm: $diskprobe not built; run cmake --build $build" >&2; exit 2; }
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  for f in "$here"/guest/t_*.sh; do n=${f##*/t_}; tests+=("${n%.sh}"); done
fi
scripts=()
for t in "${tests[@]}"; do
  if [ -f "$here/guest/t_$t.sh" ]; then scripts+=("t_$t")
  elif [ -f "$here/guest/$t.sh" ]; then scripts+=("$t")
  else echo "vm: no guest test '$t' (tests/vm/guest/t_$t.sh)" >&2; exit 2
  fi
done

[ "$(id -u)" -eq 0 ] || skip "needs root (the guest runs the host's tools as root over 9p)"
qemu=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 not found: packaging/install-deps.sh --test installs qemu-system-x86"
busybox=$(command -v busybox) || skip "busybox not found: install busybox-static"
! ldd "$busybox" >/dev/null 2>&1 || skip "$busybox is not static: install busybox-static"
command -v cpio >/dev/null || skip "cpio not found"

# The guest's userland is this host's root, seen through the guest's tmpfs /tmp: anything
# under the host's /tmp is invisible in there.
case "$build/" in /tmp/*) skip "build tree $build is under /tmp, which the guest hides; build elsewhere" ;; esac
case "$src/" in /tmp/*) skip "source tree $src is under /tmp, which the guest hides" ;; esac

# --- kernel: Debian's, fetched once into the cache --------------------------------------------
cache=${DISKPROBE_VM_CACHE:-/var/cache/diskprobe-vm}
case "$cache/" in /tmp/*) skip "DISKPROBE_VM_CACHE $cache is under /tmp, which the guest hides" ;; esac
mkdir -p "$cache"
exec 8> "$cache/lock"
flock 8  # one fetch at a time
kver=$(ls "$cache/root/lib/modules" 2>/dev/null | head -n1 || true)
if [ -z "$kver" ] || [ ! -f "$cache/root/boot/vmlinuz-$kver" ]; then
  command -v apt-get >/dev/null || skip "no kernel in $cache and no apt-get to fetch one"
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  [ -n "$pkg" ] || skip "apt-cache knows no linux-image-amd64 dependency (run apt-get update)"
  echo "vm: fetching $pkg into $cache" >&2
  rm -rf "$cache/root" "$cache/root.new" "$cache"/*.deb
  (cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) || skip "apt-get download $pkg failed (no network?)"
  kver=${pkg#linux-image-}
  # Unpacked beside and moved in whole: an interrupted fetch leaves no half a kernel behind.
  dpkg -x "$cache"/"$pkg"_*.deb "$cache/root.new"
  depmod -b "$cache/root.new" "$kver"
  mv "$cache/root.new" "$cache/root"
  rm -f "$cache"/*.deb
fi
exec 8>&-
kernel=$cache/root/boot/vmlinuz-$kver

# --- work folder: disks, initramfs, results ---------------------------------------------------
work=${DISKPROBE_VM_WORK:-$build/vm}
case "$work/" in /tmp/*) skip "DISKPROBE_VM_WORK $work is under /tmp, which the guest hides" ;; esac
mkdir -p "$work"
# One guest at a time per work folder: a second run waits rather than pull its disks away.
exec 9> "$work/lock"
flock 9
rm -rf "$work/out" "$work/initramfs" "$work"/*.img
mkdir -p "$work/out" "$work/initramfs/bin" "$work/initramfs/modules"
# Sparse files: the sizes are the seed's shape, not its bytes. What the tests write fills
# them (about 0.5 GiB a run, and at most 256 MiB each of the volumes vdf and vdg), so they go
# when the run ends; DISKPROBE_VM_KEEP=1 keeps them.
[ "${DISKPROBE_VM_KEEP:-0}" = 1 ] || trap 'rm -f "$work"/*.img' EXIT
# vdd and vde: spare disks the holder and I/O error tests stack dm, md and LVM on; vdf and
# vdg: the provisioned volumes QEMU throttles (guest/volumes.sh).
for d in vda:2G vdb:1G vdc:2G vdd:256M vde:256M vdf:256M vdg:256M nvme:2G sda:1G; do
  truncate -s "${d#*:}" "$work/${d%%:*}.img"
done

# Seed 000's layout, written here at native speed rather than in the emulated guest.
# vda: the system disk (BIOS boot, EFI System, ext4 root); vdb: GPT + one ext4; vdc blank.
for t in sgdisk mkfs.ext4 mkfs.fat; do
  command -v $t >/dev/null || skip "$t is needed for the guest's disk layout (gdisk, e2fsprogs, dosfstools)"
done
sgdisk -n1:2048:+2M -t1:ef02 -n2:0:+200M -t2:ef00 -n3:0:0 -t3:8300 "$work/vda.img" >/dev/null
sgdisk -n1:2048:0 -t1:8300 -c1:primary "$work/vdb.img" >/dev/null
part() {  # image partition-number: its first sector and its size in KiB
  sgdisk -i "$2" "$1" | awk '/First sector/ {s = $3} /Last sector/ {e = $3}
                             END {printf "%d %d\n", s, (e - s + 1) / 2}'
}
read -r start kib < <(part "$work/vda.img" 2)
mkfs.fat -F 16 --offset "$start" "$work/vda.img" "$kib" >/dev/null 2>&1
read -r start kib < <(part "$work/vda.img" 3)
mkfs.ext4 -q -F -L root -E "offset=$((start * 512))" "$work/vda.img" "${kib}k"
read -r start kib < <(part "$work/vdb.img" 1)
mkfs.ext4 -q -F -E "offset=$((start * 512))" "$work/vdb.img" "${kib}k"

# --- initramfs: busybox and the modules the 9p root needs -------------------------------------
cp "$busybox" "$work/initramfs/bin/busybox"
for m in virtio_pci 9pnet_virtio 9p; do
  modprobe -d "$cache/root" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' > "$work/modules.order"
while read -r ko; do
  cp "$ko" "$work/initramfs/modules/"
  echo "${ko##*/}" >> "$work/initramfs/modules/order"
done < "$work/modules.order"
cp "$here/init" "$work/initramfs/init"
chmod +x "$work/initramfs/init"
(cd "$work/initramfs" && find . | cpio -o -H newc --quiet) > "$work/initramfs.cpio"

# --- the guest --------------------------------------------------------------------------------
ncpu=4
cmdline="console=ttyS0 quiet loglevel=4 panic=-1 clocksource=tsc tsc=reliable nvme.poll_queues=1"
cmdline+=" dp.modroot=$cache/root dp.src=$src dp.build=$build dp.tests=$(IFS=,; echo "${scripts[*]}")"
# DISKPROBE_VM_ARGS: comma-separated arguments for a guest script (bench.sh passes them on).
cmdline+=" dp.args=${DISKPROBE_VM_ARGS:-}"
blk() { echo "-drive file=$work/$1.img,if=none,id=$1,format=raw,cache=unsafe,aio=threads${2:+,$2}"; }
# The volumes' limits as QEMU's throttling.* options (docs/throttle.txt): a leaky bucket in
# the hypervisor, below the guest, as a cloud's. bps: MiB/s in bytes.
. "$here/guest/volumes.sh"
vdf_limits="throttling.iops-read=$vdf_iops,throttling.iops-write=$vdf_iops"
vdf_limits+=",throttling.iops-write-max=$vdf_burst_iops,throttling.iops-write-max-length=$vdf_burst_len"
vdf_limits+=",throttling.bps-total=$((vdf_mbps * 1048576))"
vdg_limits="throttling.iops-total=$vdg_iops"
# Two NUMA nodes of two CPUs and half the memory each (t_numa: fio's numa options).
numa=(-object memory-backend-ram,id=mem0,size=768M -object memory-backend-ram,id=mem1,size=768M
      -numa node,nodeid=0,cpus=0-$((ncpu / 2 - 1)),memdev=mem0 -numa node,nodeid=1,cpus=$((ncpu / 2))-$((ncpu - 1)),memdev=mem1)
args=(-accel tcg,thread=multi -cpu max -smp "$ncpu" -m 1536 "${numa[@]}" -nographic -no-reboot -nic none
      -kernel "$kernel" -initrd "$work/initramfs.cpio" -append "$cmdline"
      -serial "file:$work/console.log" -monitor none
      -virtfs local,path=/,mount_tag=host,security_model=passthrough,readonly=on,multidevs=remap
      -virtfs "local,path=$work/out,mount_tag=out,security_model=passthrough,multidevs=remap"
      $(blk vda) -device virtio-blk-pci,drive=vda,serial=dp-vda
      $(blk vdb) -device virtio-blk-pci,drive=vdb,serial=dp-vdb
      $(blk vdc) -device virtio-blk-pci,drive=vdc,serial=dp-vdc,num-queues=$ncpu
      $(blk vdd) -device virtio-blk-pci,drive=vdd,serial=dp-vdd
      $(blk vde) -device virtio-blk-pci,drive=vde,serial=dp-vde
      $(blk vdf "$vdf_limits") -device virtio-blk-pci,drive=vdf,serial=dp-vdf
      $(blk vdg "$vdg_limits") -device virtio-blk-pci,drive=vdg,serial=dp-vdg
      $(blk nvme) -device nvme,drive=nvme,serial=dpnvme0,max_ioqpairs=$((ncpu + 1))
      -device virtio-scsi-pci,id=scsi0
      $(blk sda) -device scsi-hd,drive=sda,bus=scsi0.0,serial=dp-sda)
budget=${DISKPROBE_VM_TIMEOUT:-450}
start=$(date +%s)
echo "vm: booting $kver under TCG with $ncpu vCPUs: ${tests[*]}" >&2
rc=0
timeout "$budget" "$qemu" "${args[@]}" </dev/null || rc=$?
echo "vm: guest ran $(( $(date +%s) - start )) s" >&2
if [ "$rc" -eq 124 ]; then
  echo "vm: the guest did not finish within ${budget}s; console:" >&2
  tail -n 60 "$work/console.log" >&2
  exit 1
fi

# --- results: each test wrote NAME.log and NAME.rc into the writable share ---------------------
if [ ! -f "$work/out/setup.rc" ]; then
  echo "vm: the guest did not reach its tests (qemu exit $rc); console:" >&2
  tail -n 60 "$work/console.log" >&2
  exit 1
fi
failed=()
if [ "$(cat "$work/out/setup.rc")" != 0 ]; then
  echo "vm: guest setup failed:" >&2; cat "$work/out/setup.log" >&2
  exit 1
fi
for t in "${tests[@]}"; do
  trc=$(cat "$work/out/$t.rc" 2>/dev/null || echo missing)
  case "$trc" in
    0) echo "vm: PASS $t ($(cat "$work/out/$t.time" 2>/dev/null || echo ?) s)" ;;
    77) echo "vm: SKIP $t: $(tail -n1 "$work/out/$t.log")" ;;
    *) echo "vm: FAIL $t (exit $trc):"; sed 's/^/    /' "$work/out/$t.log" 2>/dev/null || true
       failed+=("$t") ;;
  esac
done
[ ${#failed[@]} -eq 0 ] || { echo "vm: failed: ${failed[*]} (logs in $work/out)"; exit 1; }
