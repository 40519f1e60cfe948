# Every dependency is a Debian 12 package found on the system; nothing is downloaded.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)
find_package(simdjson 3 REQUIRED)  # libsimdjson-dev: reads request lines and journal records
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)  # libssl-dev: SHA-256 of --tokens entries
if(NOT DEFINED ECSD_BUILD_TESTS OR ECSD_BUILD_TESTS)  # only tests/ (and the benchmarks under it) use these
  find_package(GTest REQUIRED)
  find_package(benchmark REQUIRED)
endif()

# Standalone Asio (libasio-dev) ships headers only and no CMake package.
find_path(ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(asio_standalone INTERFACE)
target_include_directories(asio_standalone SYSTEM INTERFACE ${ASIO_INCLUDE_DIR})
# ASIO_HAS_STD_ALIGNED_ALLOC, set for every file: Asio decides it from _GLIBCXX_HAVE_ALIGNED_ALLOC,
# which only a standard header defines, so a file that includes Asio before any of them built its
# inline aligned_new/aligned_delete the other way, and the linker kept one of each: ASan caught
# aligned_alloc'd handler memory freed by operator delete. glibc has had aligned_alloc since 2.16.
target_compile_definitions(asio_standalone INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED ASIO_HAS_STD_ALIGNED_ALLOC=1)
target_link_libraries(asio_standalone INTERFACE Threads::Threads)
add_library(asio::asio ALIAS asio_standalone)

find_package(PkgConfig REQUIRED)
pkg_check_modules(READLINE REQUIRED IMPORTED_TARGET readline)
# Debian's libzstd-dev compresses binary snapshots on request (--snapshot-format zstd).
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
# Debian's liblua5.4-dev runs the systems and spells clients define (server/world/script.cpp).
pkg_check_modules(LUA REQUIRED IMPORTED_TARGET lua5.4)

# Debian's http-parser (libhttp-parser-dev) parses the HTTP face's requests; it ships no CMake or
# pkg-config file.
find_path(HTTP_PARSER_INCLUDE_DIR http_parser.h REQUIRED)
find_library(HTTP_PARSER_LIBRARY http_parser REQUIRED)
add_library(http_parser_lib INTERFACE)
target_include_directories(http_parser_lib SYSTEM INTERFACE ${HTTP_PARSER_INCLUDE_DIR})
target_link_libraries(http_parser_lib INTERFACE ${HTTP_PARSER_LIBRARY})
add_library(http_parser::http_parser ALIAS http_parser_lib)
