#pragma once

#include <string>

namespace ecsd::net {

/// @brief Sends spdlog's default logger to stderr (stdout carries only the "listening on" line)
/// at the given level name.
void setup_logging(const std::string& level);

}  // namespace ecsd::net
