// What the first touch of fresh memory costs, by how long ago memory was last freed (issue 16: a
// saving child copies the world into fresh memory). On a VM whose balloon reports free pages back
// to its host, memory freed a while ago costs a host fault per page on its next first touch. Maps
// MB of anonymous memory in 2 MiB pages, writes all of it, unmaps it, waits, and again: six times
// for each wait.
//
//   cc -O2 -o /tmp/first-touch-cost scripts/first-touch-cost.c
//   /tmp/first-touch-cost 64
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
    if (argc != 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: first-touch-cost MB\n");
        return 2;
    }
    const size_t huge = (size_t)2 << 20;
    const size_t n = ((size_t)atoi(argv[1]) << 20) & ~(huge - 1);
    const int waits_ms[] = {0, 50, 200, 500, 1000, 2000, 4000};
    for (size_t w = 0; w < sizeof waits_ms / sizeof waits_ms[0]; ++w) {
        double sum = 0, max = 0;
        for (int r = 0; r < 6; ++r) {
            const struct timespec pause = {waits_ms[w] / 1000, (long)(waits_ms[w] % 1000) * 1000000L};
            nanosleep(&pause, NULL);
            char* raw = mmap(NULL, n + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (raw == MAP_FAILED) return 1;
            char* p = (char*)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
            madvise(p, n, MADV_HUGEPAGE);
            const double t0 = now_ms();
            memset(p, 1, n);
            const double ms = now_ms() - t0;
            sum += ms;
            if (ms > max) max = ms;
            munmap(raw, n + huge);
        }
        printf("freed %4d ms before: touching %zu MB took %.1f ms on average, %.1f ms at most\n", waits_ms[w],
               n >> 20, sum / 6, max);
    }
    return 0;
}
