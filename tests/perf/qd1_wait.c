// diskprobe's QD1 wait, alone: 4k random reads at QD1 for 1.5 s on one device, each I/O
// submitted and waited for as diskprobe's io_uring loop does it (SINGLE_ISSUER|DEFER_TASKRUN,
// registered file and buffer, io_uring_submit_and_get_events, then a peek, then
// io_uring_wait_cqe), in about forty lines. It prints the mean and median latency in us.
//
// A measurement for issue 14's unchecked row (loop's worker on another CPU, C-states free),
// run by tests/perf/qd1_wait.sh beside fio and diskprobe; not a test. If this loop is as
// slow as diskprobe there, the gap to fio is not in diskprobe's own code or its threads.
//
//   qd1_wait DEVICE proc|thread [VARIANT]
//     proc     the loop in the process's only thread (as fio's job process)
//     thread   the loop in a second thread while main joins it (as diskprobe's jobs)
//   qd1_wait tick NS   wakes every NS nanoseconds until killed (qd1_wait.sh's TICK_NS)
//     VARIANT  a sum of: 1 add IORING_SETUP_COOP_TASKRUN (fio 3.33 sets it with DEFER_TASKRUN),
//              2 a ring of 1 SQE and 1 CQE (fio's iodepth=1 ring), 4 io_uring_submit without
//              GETEVENTS then the wait (fio's two io_uring_enter calls), 8 neither the file
//              nor the buffer registered (fio without registerfiles and fixedbufs); 15 is
//              fio 3.33's default path in all four
//
// Reads from 8 MiB for 200 MiB, as the fidelity row does.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char* path;
static int variant;

static uint64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

static void die(const char* what, int err) {
  fprintf(stderr, "qd1_wait: %s: %s\n", what, strerror(err));
  exit(1);
}

static void* run(void* arg) {
  (void)arg;
  int fd = open(path, O_RDONLY | O_DIRECT);
  if (fd < 0) die(path, errno);
  struct io_uring r;
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  unsigned entries = 8;
  if (variant & 1) p.flags |= IORING_SETUP_COOP_TASKRUN;
  if (variant & 2) {
    p.flags |= IORING_SETUP_CQSIZE;
    p.cq_entries = 1;
    entries = 1;
  }
  int ret = io_uring_queue_init_params(entries, &r, &p);
  if (ret < 0) die("io_uring_queue_init_params", -ret);
  void* buf = NULL;
  if ((ret = posix_memalign(&buf, 4096, 4096)) != 0) die("posix_memalign", ret);
  struct iovec iov = {buf, 4096};
  if (!(variant & 8)) {
    if ((ret = io_uring_register_buffers(&r, &iov, 1)) < 0) die("io_uring_register_buffers", -ret);
    if ((ret = io_uring_register_files(&r, &fd, 1)) < 0) die("io_uring_register_files", -ret);
  }
  const size_t cap = 400000;
  uint64_t* lat = malloc(cap * sizeof *lat);
  if (!lat) die("malloc", ENOMEM);
  size_t n = 0;
  uint64_t s = 88172645463325252ull;  // xorshift64
  const uint64_t nblocks = (200u << 20) / 4096, t_end = now() + 1500000000ull;
  for (;;) {
    const uint64_t t0 = now();
    if (t0 >= t_end || n == cap) break;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    struct io_uring_sqe* q = io_uring_get_sqe(&r);
    const uint64_t off = (8u << 20) + (s % nblocks) * 4096;
    if (variant & 8) {
      io_uring_prep_read(q, fd, buf, 4096, off);
    } else {
      io_uring_prep_read_fixed(q, 0, buf, 4096, off, 0);
      q->flags |= IOSQE_FIXED_FILE;
    }
    ret = (variant & 4) ? io_uring_submit(&r) : io_uring_submit_and_get_events(&r);
    if (ret < 0) die("io_uring_enter (submit)", -ret);
    struct io_uring_cqe* c;
    if (io_uring_peek_cqe(&r, &c) != 0 && (ret = io_uring_wait_cqe(&r, &c)) < 0) die("io_uring_wait_cqe", -ret);
    const uint64_t t1 = now();
    if (c->res != 4096) die("read", c->res < 0 ? -c->res : EIO);
    io_uring_cqe_seen(&r, c);
    lat[n++] = t1 - t0;
  }
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += (double)lat[i];
  qsort(lat, n, sizeof *lat, cmp);
  printf("%.1f %.1f\n", sum / (double)n / 1e3, (double)lat[n / 2] / 1e3);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc == 3 && !strcmp(argv[1], "tick")) {  // the sleeper: nanosleep(NS) until killed
    const long ns = atol(argv[2]);
    if (ns <= 0 || ns >= 1000000000) {
      fprintf(stderr, "qd1_wait tick: NS must be 1 to 999999999\n");
      return 2;
    }
    const struct timespec t = {0, ns};
    for (;;) nanosleep(&t, NULL);
  }
  if (argc < 3 || (strcmp(argv[2], "proc") && strcmp(argv[2], "thread"))) {
    fprintf(stderr, "usage: qd1_wait DEVICE proc|thread [VARIANT 0-15] | qd1_wait tick NS\n");
    return 2;
  }
  path = argv[1];
  variant = argc > 3 ? atoi(argv[3]) : 0;
  if (!strcmp(argv[2], "proc")) {
    run(NULL);
    return 0;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, run, NULL) != 0) die("pthread_create", errno);
  pthread_join(t, NULL);
  return 0;
}
