// How long one pass of writes over a few megabytes takes, pass after pass, in the thread's own CPU
// time (issue 46: a tick's movement system, normally 0.2 ms, now and then took 4-5 ms of CPU with
// no switch and no page fault). Rewrites an array of MB megabytes PASSES times and prints the
// percentiles of a pass and how many took over three times the median. On a machine whose host
// tracks the guest's written pages, the first write to each page after the host looked costs a
// trip to the host, which the guest counts as its own CPU time.
//
//   cc -O2 -o /tmp/write-stall scripts/write-stall.c
//   /tmp/write-stall 4.8 3000
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    const double mb = argc > 1 ? atof(argv[1]) : 4.8;
    const int passes = argc > 2 ? atoi(argv[2]) : 3000;
    const size_t n = (size_t)(mb * 1e6 / sizeof(double));
    if (n == 0 || passes < 10) {
        fprintf(stderr, "usage: write-stall [MB > 0] [PASSES >= 10]\n");
        return 2;
    }
    double* a = malloc(n * sizeof(double));
    double* took = malloc((size_t)passes * sizeof(double));
    if (!a || !took) return 1;
    for (size_t i = 0; i < n; ++i) a[i] = 1.0;
    for (int p = 0; p < passes; ++p) {
        const double t0 = cpu_ms();
        for (size_t i = 0; i < n; ++i) a[i] = a[i] * 1.0000001 + 1e-9;
        took[p] = cpu_ms() - t0;
    }
    qsort(took, (size_t)passes, sizeof(double), by_value);
    const double p50 = took[passes / 2];
    int slow = 0;
    for (int p = 0; p < passes; ++p) slow += took[p] > 3 * p50;
    printf(
        "%.1f MB x %d passes, CPU ms a pass: p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  over 3x p50: %d "
        "(checksum %g)\n",
        mb, passes, p50, took[passes * 99 / 100], took[passes * 999 / 1000], took[passes - 1], slow,
        a[n / 2]);
    free(a);
    free(took);
    return 0;
}
