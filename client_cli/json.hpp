#pragma once

#include <nlohmann/json.hpp>

namespace ecsd::cli {

/// @brief JSON as ecsctl handles it: objects keep the order the server (or the user) wrote their
///        members in, so tables show columns in that order.
using json = nlohmann::ordered_json;

}  // namespace ecsd::cli
