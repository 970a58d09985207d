#!/bin/bash
# The guest's disks, as seed 000's `fdisk -lu` listing: vda the system disk (GPT: BIOS boot,
# EFI System, a mounted ext4), vdb a data disk with GPT + ext4, vdc blank. Beside them an
# NVMe namespace (interrupt queues + one poll queue), a virtio-scsi disk and null_blk; vdf and
# vdg the volumes QEMU throttles (volumes.sh).
# run.sh wrote the partition tables and filesystems on the host, at native speed.
. "$(dirname "$0")/lib.sh"
set -e
for m in virtio_blk nvme virtio_scsi sd_mod ext4; do modprobe "$m"; done
# blk-mq null_blk, one submit queue per CPU, completed in softirq; not memory-backed, so it
# reads zeroes whatever was written (the safety issue's blank-device case).
modprobe null_blk queue_mode=2 submit_queues=4 irqmode=1 gb=1 nr_devices=1
for d in vda vda3 vdb vdb1 vdc vdd vde vdf vdg nvme0n1 sda nullb0; do wait_for "/dev/$d"; done
# Virtio disks are named in probe order: check each is the one run.sh meant (the throttled
# volumes above all).
for d in vda vdb vdc vdd vde vdf vdg; do
  [ "$(cat /sys/block/$d/serial)" = "dp-$d" ] || { echo "/dev/$d is not run.sh's dp-$d" >&2; exit 1; }
done
mkdir -p /run/vda3 && mount /dev/vda3 /run/vda3
fdisk -lu /dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde /dev/vdf /dev/vdg /dev/nvme0n1 /dev/sda /dev/nullb0
cat /proc/interrupts
