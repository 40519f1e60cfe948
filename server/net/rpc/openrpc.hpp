#pragma once
// rpc.discover's document, generated from the method table the dispatcher uses.

#include <nlohmann/json.hpp>

namespace ecsd::net {

class method_table;

/// @brief An OpenRPC 1.2.6 document: every method with its by-name params, result schema and
/// flags (x-flags), and the error reasons under components.errors.
[[nodiscard]] nlohmann::json make_openrpc(const method_table& table);

}  // namespace ecsd::net
