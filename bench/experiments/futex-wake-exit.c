// perf bench futex wake (tools/perf/bench/futex-wake.c, Linux 6.1) rebuilt
// with the factors that differ from kbench's perf/futex wake made switchable,
// to find which one moves the time.
//
//   -x pthread_exit|return   how a woken waiter leaves (perf: pthread_exit)
//   -P                       dlopen libgcc_s.so.1 before the first round, as
//                            the first pthread_exit would do inside the clock
//   -c gtod|mono             clock: gettimeofday in whole us (perf) or
//                            CLOCK_MONOTONIC in ns (kbench)
//   -s MS                    pause between waiters blocked and clock (100)
//   -t N -r N                waiters (online CPUs), rounds (10)
//   -v                       print every round
// Prints the mean over rounds in ms, like perf's "Wokeup N of N threads in X ms".
//
// Build: cc -O2 -pthread -o /tmp/futex-wake-exit bench/experiments/futex-wake-exit.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>

static unsigned int futex1;
static int threads_starting, use_pthread_exit = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parent = PTHREAD_COND_INITIALIZER, worker = PTHREAD_COND_INITIALIZER;

static long futex(unsigned int* uaddr, int op, unsigned int val) {
  return syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static void* workerfn(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  if (--threads_starting == 0) pthread_cond_signal(&parent);
  pthread_cond_wait(&worker, &lock);
  pthread_mutex_unlock(&lock);
  while (futex(&futex1, FUTEX_WAIT, 0) != 0 && errno == EINTR) {
  }
  if (use_pthread_exit) pthread_exit(NULL);
  return NULL;
}

static double now_us(int gtod) {
  if (gtod) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec * 1e6 + tv.tv_usec;
  }
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char** argv) {
  int nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN), rounds = 10, settle_ms = 100, gtod = 1, verbose = 0, opt;
  while ((opt = getopt(argc, argv, "x:Pc:s:t:r:v")) != -1) {
    switch (opt) {
      case 'x': use_pthread_exit = strcmp(optarg, "return") != 0; break;
      case 'P':
        if (!dlopen("libgcc_s.so.1", RTLD_NOW)) { fprintf(stderr, "dlopen libgcc_s: %s\n", dlerror()); return 1; }
        break;
      case 'c': gtod = strcmp(optarg, "mono") != 0; break;
      case 's': settle_ms = atoi(optarg); break;
      case 't': nthreads = atoi(optarg); break;
      case 'r': rounds = atoi(optarg); break;
      case 'v': verbose = 1; break;
      default: fprintf(stderr, "usage: %s [-x pthread_exit|return] [-P] [-c gtod|mono] [-s MS] [-t N] [-r N] [-v]\n", argv[0]); return 2;
    }
  }
  int ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
  pthread_t* w = calloc((size_t)nthreads, sizeof(*w));
  double sum = 0;
  for (int round = 0; round < rounds; ++round) {
    futex1 = 0;
    threads_starting = nthreads;
    for (int i = 0; i < nthreads; ++i) {  // pinned round-robin, as perf
      pthread_attr_t attr;
      cpu_set_t set;
      pthread_attr_init(&attr);
      CPU_ZERO(&set);
      CPU_SET(i % ncpus, &set);
      pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
      if (pthread_create(&w[i], &attr, workerfn, NULL) != 0) { perror("pthread_create"); return 1; }
      pthread_attr_destroy(&attr);
    }
    pthread_mutex_lock(&lock);
    while (threads_starting) pthread_cond_wait(&parent, &lock);
    pthread_cond_broadcast(&worker);
    pthread_mutex_unlock(&lock);
    usleep((useconds_t)settle_ms * 1000);
    int woken = 0;
    const double start = now_us(gtod);
    while (woken != nthreads) woken += (int)futex(&futex1, FUTEX_WAKE, 1);
    double us = now_us(gtod) - start;
    if (gtod) us = (double)(long)us;  // perf keeps whole microseconds
    if (verbose) printf("round %d: %.4f ms\n", round + 1, us / 1e3);
    sum += us;
    for (int i = 0; i < nthreads; ++i) pthread_join(w[i], NULL);
  }
  printf("%.6f\n", sum / rounds / 1e3);
  return 0;
}
