# The test bed's provisioned volumes (sourced by run.sh for QEMU's -drive and by the guest
# tests for what to expect). QEMU throttles them in the hypervisor, as a cloud does, with
# odd limits the TCG guest exceeds comfortably unthrottled (vdc: see the README's test bed).
# vdf: 1,237 IOPS each way and 23 MiB/s; writes have a burst bucket, gp2-like: up to
# vdf_burst_iops until vdf_burst_iops x vdf_burst_len I/Os above the rate are spent.
vdf_iops=1237 vdf_mbps=23 vdf_burst_iops=2711 vdf_burst_len=2
# vdg: 677 IOPS, reads and writes together, no burst: the curve's volume. Half what the
# guest does at QD 1 with the host loaded (1,477 IOPS read at 1,777 in a CI run), so the knee
# is the throttle, not the emulated CPU.
vdg_iops=677
