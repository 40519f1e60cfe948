#include "ecsd/protocol/version.hpp"

#include <string>

namespace ecsd::protocol {

const char* version_line(const char* program) noexcept {
    thread_local std::string line;
    line = std::string(program) + " " + version;
    return line.c_str();
}

}  // namespace ecsd::protocol
