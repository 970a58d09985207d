#!/bin/bash
# A disk something is stacked on is refused with `holders`: a dm linear device, an md RAID1
# member (also by its linux_raid_member signature), an LVM physical volume with an active LV.
# No udev here: dm nodes are /dev/dm-N, LVM runs with udev sync off.
. "$(dirname "$0")/lib.sh"
modprobe dm_mod; modprobe raid1
sectors=$(blockdev --getsz /dev/vdd)

note "dm linear over vdd"
dmsetup create dp-linear --table "0 $sectors linear /dev/vdd 0"
cleanup dmsetup remove dp-linear
run_dp 3 check vdd --json
expect_grep "$T/out" '"dm-0 \(device-mapper dp-linear\)' "vdd's holder is dm-0 (dp-linear)"
expect_grep "$T/out" '"code": "holders"' "vdd refused with holders"
run_dp 3 run --profile essd-plx-latency vdd --runtime 1
dmsetup remove dp-linear

note "md RAID1 over vdd and vde"
mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --metadata=1.2 --assume-clean /dev/vdd /dev/vde
cleanup 'mdadm --zero-superblock /dev/vdd /dev/vde'
cleanup mdadm --stop /dev/md0
for d in vdd vde; do
  run_dp 3 check $d --json
  expect_grep "$T/out" '"md0' "$d's holder is md0"
  expect_grep "$T/out" '"code": "holders"' "$d refused with holders"
  expect_grep "$T/out" 'linux_raid_member' "$d refused with its linux_raid_member signature"
done
mdadm --stop /dev/md0
mdadm --zero-superblock /dev/vdd /dev/vde

note "LVM: an active LV on vde"
lvm_conf='devices { obtain_device_list_from_udev = 0 } activation { udev_sync = 0 udev_rules = 0 }
          backup { backup = 0 archive = 0 } global { use_lvmetad = 0 }'
lvm() { command lvm "$1" --config "$lvm_conf" "${@:2}"; }
lvm pvcreate -q /dev/vde
cleanup 'lvm pvremove -q -y /dev/vde; wipefs -qa /dev/vde'
lvm vgcreate -q dpvg /dev/vde
cleanup lvm vgremove -q -f dpvg
lvm lvcreate -q -y -L 64M -n lv dpvg
run_dp 3 check vde --json
expect_grep "$T/out" '"code": "holders"' "vde refused with holders (the LV)"
expect_grep "$T/out" 'LVM2_member' "vde refused with its LVM2_member signature"
run_dp 3 run --profile essd-plx-latency vde --runtime 1
