#pragma once
// The viewer: one self-contained HTML page (server/net/http/viewer/index.html), built into ecsd
// at compile time so the binary and the Docker image need no files beside them.
#include <string_view>

namespace ecsd::net {

/// @brief The page served at GET / on the HTTP port.
[[nodiscard]] std::string_view viewer_page() noexcept;

}  // namespace ecsd::net
