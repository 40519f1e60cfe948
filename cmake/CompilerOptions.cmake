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
endif()
if(ECSD_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  # TSan cannot model the fences Asio puts around handlers (gcc: -Wtsan); the scheduler's mutexes
  # already order handlers across threads, and those TSan sees.
  add_compile_definitions(ASIO_DISABLE_FENCED_BLOCK)
endif()
