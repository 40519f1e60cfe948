# Warnings for our own targets, and the sanitizer switch. Third-party headers
# are included as SYSTEM so their warnings never fail our build.
option(ECSD_WERROR "Treat compiler warnings as errors" OFF)
option(ECSD_SANITIZE "Build everything with AddressSanitizer and UBSan" OFF)

add_library(ecsd_warnings INTERFACE)
target_compile_options(ecsd_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
if(ECSD_WERROR)
  target_compile_options(ecsd_warnings INTERFACE -Werror)
endif()

if(ECSD_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
