# Warnings for our own targets, and the sanitizer switch. Third-party headers
# are included as SYSTEM so their warnings never fail our build.
option(ECSD_WERROR "Treat compiler warnings as errors" OFF)
option(ECSD_SANITIZE "Build everything with AddressSanitizer and UBSan" OFF)
option(ECSD_TSAN "Build everything with ThreadSanitizer (not together with ECSD_SANITIZE)" OFF)

add_library(ecsd_warnings INTERFACE)
target_compile_options(ecsd_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
if(ECSD_WERROR)
  target_compile_options(ecsd_warnings INTERFACE -Werror)
endif()

if(ECSD_SANITIZE AND ECSD_TSAN)
  message(FATAL_ERROR "ECSD_SANITIZE and ECSD_TSAN cannot be combined: build them in two folders")
endif()
if(ECSD_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # -O1 with line tables only (after the build type's -O2 -g, so these win): half the compile time
  # of -O2 -g under both sanitizers, and the reports still name every frame's file and line.
  add_compile_options(-O1 -g1)
endif()
if(ECSD_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  # Line tables only: TSan's reports name file and line, and the build is a quarter shorter. It stays
  # at -O2, because the threaded tests need ecsd at speed to make their races likely.
  add_compile_options(-g1)
  # TSan cannot model the fences Asio puts around handlers (gcc: -Wtsan); the scheduler's mutexes
  # already order handlers across threads, and those TSan sees.
  add_compile_definitions(ASIO_DISABLE_FENCED_BLOCK)
endif()

# The server's allocator: jemalloc (Debian's libjemalloc-dev), as Redis links it. Requests build and
# free many small objects (json trees, answer texts); jemalloc's per-thread caches take about a
# sixth off a world.get_components and a third off a world.mutate_components (docs/design.md,
# "Against Redis"). The sanitizers bring their own malloc, so they build without it.
option(ECSD_JEMALLOC "Link the server and its benchmarks with jemalloc" ON)
add_library(ecsd_allocator INTERFACE)
if(ECSD_JEMALLOC AND NOT ECSD_SANITIZE AND NOT ECSD_TSAN)
  find_library(ECSD_JEMALLOC_LIBRARY NAMES jemalloc)
  if(NOT ECSD_JEMALLOC_LIBRARY)
    message(FATAL_ERROR "jemalloc not found: run scripts/install-deps.sh (libjemalloc-dev), "
                        "or configure with -DECSD_JEMALLOC=OFF for glibc's malloc")
  endif()
  target_link_libraries(ecsd_allocator INTERFACE ${ECSD_JEMALLOC_LIBRARY})
  target_sources(ecsd_allocator INTERFACE ${CMAKE_SOURCE_DIR}/server/net/allocator.cpp)
endif()

# Unity builds for the libraries whose files share heavy headers (Asio, nlohmann/json, spdlog):
# each batch parses those once instead of once per file, which takes about a sixth off the CPU
# time of a full build (CI builds the tree three times on two cores). Off for a build that
# checks each file on its own (clang-tidy reads compile_commands.json, which lists the files).
option(ECSD_UNITY "Build the server's and ecsctl's libraries in unity batches" ON)
function(ecsd_unity target batch)
  if(ECSD_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${batch})
  endif()
endfunction()
