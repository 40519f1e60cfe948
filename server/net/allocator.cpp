// jemalloc's settings for ecsd, read once when the allocator starts (built in only when ecsd links
// jemalloc: cmake/CompilerOptions.cmake, ECSD_JEMALLOC). MALLOC_CONF in the environment still
// overrides them.
//   background_thread  freed pages go back to the system from jemalloc's own thread, so a world that
//                      only ticks (allocating little) still returns what a burst of requests left;
//   dirty_decay_ms     one second, not ten, before unused pages are returned;
//   muzzy_decay_ms     at once after that (MADV_DONTNEED rather than MADV_FREE, so RSS shows it).
// These keep RSS per entity where glibc's malloc left it (scripts/bench-autosave.sh measures it;
// docs/benchmarks.md); jemalloc's defaults keep freed pages resident far longer.
extern "C" {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): jemalloc reads this symbol
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
}
