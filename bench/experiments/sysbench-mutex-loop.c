// The empty loop of sysbench's mutex event (mutex-locks x mutex-loops
// iterations of `for (i = 0; i < loops; i++)` with a compiler barrier), timed
// with a 64-bit counter (as kbench once had) and a 32-bit counter
// (sysbench 1.0's unsigned int), alternately in one process.
// Usage: sysbench-mutex-loop [ROUNDS]   (pin it: taskset -c 1 ...)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct event64 { uint64_t locks, loops; };
struct event32 { uint32_t locks, loops; };

__attribute__((noinline)) static void spin64(const struct event64 *e) {
  for (uint64_t i = 0; i < e->loops; ++i) __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void spin32(const struct event32 *e) {
  for (uint32_t i = 0; i < e->loops; ++i) __asm__ volatile("" ::: "memory");
}
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 5;
  const struct event64 wide = {50000, 10000};
  const struct event32 narrow = {50000, 10000};
  printf("round  64-bit (ms)  32-bit (ms)  64/32\n");
  for (int r = 0; r < rounds; ++r) {
    const double t0 = now();
    for (uint64_t k = 0; k < wide.locks; ++k) spin64(&wide);
    const double t1 = now();
    for (uint32_t k = 0; k < narrow.locks; ++k) spin32(&narrow);
    const double t2 = now();
    printf("%5d  %11.1f  %11.1f  %5.3f\n", r + 1, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t1 - t0) / (t2 - t1));
  }
  return 0;
}
