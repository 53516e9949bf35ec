// perf bench sched messaging (tools/perf/bench/sched-messaging.c, Linux 6.1)
// rebuilt with the forking process's memory footprint made switchable, to see
// whether the size of the process the tasks are forked from moves the time.
//
//   -g N -l N -t -p    as perf: groups (10), loops (100), threads, pipes
//   -m MB              before forking, allocate and write MB of anonymous
//                      memory (perf's forked tasks carry ~2.4 MB anonymous)
//   -S KB              thread mode: stack size (perf, rt-tests: PTHREAD_STACK_MIN;
//                      kbench: 256)
//   -V N               before forking, map N extra small private writable
//                      regions, each written once (perf: ~170 mappings, the
//                      agent 12)
// Prints perf's "Total time" in seconds (with us resolution).
//
// Build: cc -O2 -pthread -o /tmp/messaging-footprint bench/experiments/messaging-footprint.c
//        (add -static for a small static binary like kbench-agent)
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATASIZE 100
static int use_pipes, thread_mode;
static unsigned int nr_loops = 100, num_groups = 10;
static size_t stack_bytes;  // 0: PTHREAD_STACK_MIN (not a constant in glibc 2.34+)

struct sender_context { unsigned int num_fds; int ready_out, wakefd; int out_fds[]; };
struct receiver_context { unsigned int num_packets; int in_fds[2]; int ready_out, wakefd; };

static void die(const char* what) { perror(what); exit(1); }

static void fdpair(int fds[2]) {
  if (use_pipes ? pipe(fds) : socketpair(AF_UNIX, SOCK_STREAM, 0, fds)) die("fdpair");
}

static void ready(int ready_out, int wakefd) {
  struct pollfd p = {.fd = wakefd, .events = POLLIN};
  if (write(ready_out, "R", 1) != 1) die("ready write");
  if (poll(&p, 1, -1) != 1) die("poll");
}

static void* sender(void* arg) {
  struct sender_context* ctx = arg;
  char data[DATASIZE];
  ready(ctx->ready_out, ctx->wakefd);
  memset(data, 'S', sizeof(data));
  for (unsigned int i = 0; i < nr_loops; i++)
    for (unsigned int j = 0; j < ctx->num_fds; j++)
      for (int done = 0; done < DATASIZE;) {
        int ret = (int)write(ctx->out_fds[j], data + done, sizeof(data) - done);
        if (ret < 0) die("write");
        done += ret;
      }
  return NULL;
}

static void* receiver(void* arg) {
  struct receiver_context* ctx = arg;
  if (!thread_mode) close(ctx->in_fds[1]);
  ready(ctx->ready_out, ctx->wakefd);
  for (unsigned int i = 0; i < ctx->num_packets; i++) {
    char data[DATASIZE];
    for (int done = 0; done < DATASIZE;) {
      int ret = (int)read(ctx->in_fds[0], data + done, DATASIZE - done);
      if (ret < 0) die("read");
      done += ret;
    }
  }
  return NULL;
}

static pthread_t create_worker(void* ctx, void* (*func)(void*)) {
  pthread_t id = 0;
  if (!thread_mode) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) { func(ctx); exit(0); }
    return 0;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes ? stack_bytes : (size_t)PTHREAD_STACK_MIN);
  if (pthread_create(&id, &attr, func, ctx)) die("pthread_create");
  return id;
}

static unsigned int group(pthread_t* pth, unsigned int num_fds, int ready_out, int wakefd) {
  struct sender_context* snd = malloc(sizeof(*snd) + num_fds * sizeof(int));
  for (unsigned int i = 0; i < num_fds; i++) {
    int fds[2];
    struct receiver_context* ctx = malloc(sizeof(*ctx));
    fdpair(fds);
    ctx->num_packets = num_fds * nr_loops;
    ctx->in_fds[0] = fds[0];
    ctx->in_fds[1] = fds[1];
    ctx->ready_out = ready_out;
    ctx->wakefd = wakefd;
    pth[i] = create_worker(ctx, receiver);
    snd->out_fds[i] = fds[1];
    if (!thread_mode) close(fds[0]);
  }
  for (unsigned int i = 0; i < num_fds; i++) {
    snd->ready_out = ready_out;
    snd->wakefd = wakefd;
    snd->num_fds = num_fds;
    pth[num_fds + i] = create_worker(snd, sender);
  }
  if (!thread_mode)
    for (unsigned int i = 0; i < num_fds; i++) close(snd->out_fds[i]);
  return num_fds * 2;
}

int main(int argc, char** argv) {
  long footprint_mb = 0, extra_maps = 0;
  int opt;
  while ((opt = getopt(argc, argv, "g:l:tpm:V:S:")) != -1) {
    switch (opt) {
      case 'g': num_groups = (unsigned)atoi(optarg); break;
      case 'l': nr_loops = (unsigned)atoi(optarg); break;
      case 't': thread_mode = 1; break;
      case 'p': use_pipes = 1; break;
      case 'm': footprint_mb = atol(optarg); break;
      case 'V': extra_maps = atol(optarg); break;
      case 'S': stack_bytes = (size_t)atol(optarg) << 10; break;
      default: fprintf(stderr, "usage: %s [-g N] [-l N] [-t] [-p] [-m MB] [-V N] [-S KB]\n", argv[0]); return 2;
    }
  }
  if (footprint_mb > 0) {  // written so every page is present, anonymous and shared copy-on-write after fork
    char* p = malloc((size_t)footprint_mb << 20);
    if (!p) die("malloc");
    memset(p, 1, (size_t)footprint_mb << 20);
  }
  for (long i = 0; i < extra_maps; i++) {  // alternating protections keep the mappings from merging
    char* p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) die("mmap");
    p[0] = 1;
    mprotect(p + 4096, 4096, PROT_READ);
  }
  const unsigned int num_fds = 20;
  pthread_t* pth = malloc(num_fds * 2 * num_groups * sizeof(pthread_t));
  int readyfds[2], wakefds[2];
  char dummy;
  fdpair(readyfds);
  fdpair(wakefds);
  unsigned int total = 0;
  for (unsigned int i = 0; i < num_groups; i++) total += group(pth + total, num_fds, readyfds[1], wakefds[0]);
  for (unsigned int i = 0; i < total; i++)
    if (read(readyfds[0], &dummy, 1) != 1) die("ready read");
  struct timeval start, stop, diff;
  gettimeofday(&start, NULL);
  if (write(wakefds[1], &dummy, 1) != 1) die("wake write");
  for (unsigned int i = 0; i < total; i++) {
    if (!thread_mode) {
      int status;
      wait(&status);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { fprintf(stderr, "a task failed\n"); return 1; }
    } else {
      pthread_join(pth[i], NULL);
    }
  }
  gettimeofday(&stop, NULL);
  timersub(&stop, &start, &diff);
  printf("%ld.%06ld\n", (long)diff.tv_sec, (long)diff.tv_usec);
  return 0;
}
