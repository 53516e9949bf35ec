// The program perf/syscall execve runs: statically linked and doing nothing,
// so the measured cost is fork + execve + exit + wait, not dynamic loading.
int main() { return 0; }
