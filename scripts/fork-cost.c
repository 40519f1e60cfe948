// What fork() costs a process by the kind of memory it holds (issue 16: the tick that starts a
// save is the tick plus a fork). Maps and fills HUGE_MB of anonymous memory in 2 MiB pages and
// SMALL_MB in 4 KiB pages, then times 20 forks, writing all of it again between them.
//
//   cc -O2 -o /tmp/fork-cost scripts/fork-cost.c
//   /tmp/fork-cost 40 13     # about what a 1M-entity world holds: 40 MB huge, 13 MB small
//   /tmp/fork-cost 0 26
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static char* filled(size_t bytes, int advice) {
    if (bytes == 0) return NULL;
    const size_t align = (size_t)2 << 20;
    char* raw = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    char* at = (char*)(((unsigned long)raw + align - 1) & ~(align - 1));
    madvise(at, bytes, advice);
    memset(at, 1, bytes);
    return at;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fork-cost HUGE_MB SMALL_MB\n");
        return 2;
    }
    const size_t huge = (size_t)atol(argv[1]) << 20;
    const size_t small = (size_t)atol(argv[2]) << 20;
    char* h = filled(huge, MADV_HUGEPAGE);
    char* s = filled(small, MADV_NOHUGEPAGE);
    double best = 1e9, sum = 0;
    const int runs = 20;
    for (int i = 0; i < runs; ++i) {
        const double t0 = now_ms();
        const pid_t pid = fork();
        if (pid == 0) _exit(0);
        const double ms = now_ms() - t0;
        waitpid(pid, NULL, 0);
        sum += ms;
        if (ms < best) best = ms;
        if (h) memset(h, i, huge);  // the pages are the parent's own again before the next fork
        if (s) memset(s, i, small);
    }
    printf("%zu MB in huge pages, %zu MB in small pages: fork best %.3f ms, mean %.3f ms (%d forks)\n",
           huge >> 20, small >> 20, best, sum / runs, runs);
    return 0;
}
