#pragma once
// The stable set of `error.data.reason` strings and their JSON-RPC codes. Clients branch on
// the reason string; codes follow JSON-RPC 2.0 for the standard five and take one code each in
// the application range -32000..-32099 for the rest. Never renumber or rename a row: add new ones.

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ecsd::protocol {

/// @brief Why a request failed; each value has one wire name and one code.
enum class reason : std::uint8_t {
    parse_error,
    invalid_request,
    method_not_found,
    invalid_params,
    internal,
    no_such_world,
    world_exists,
    no_such_entity,
    no_such_component,
    component_exists,
    invalid_value,
    no_such_system,
    no_such_spell,
    no_such_prefab,
    unauthorized,
    too_large,
    limit_reached,
    storage_error,
    rate_limited,
    timeout,
    no_such_subscription,
    world_sealed,
    no_such_action,
    action_failed,
};

/// @brief One row of the reason table.
struct reason_info {
    reason id;
    std::string_view name;     ///< the string in error.data.reason
    int code;                  ///< the JSON-RPC error code
    std::string_view message;  ///< default error.message
};

/// @brief Every row of the reason table, in enum order.
[[nodiscard]] std::span<const reason_info> all_reasons() noexcept;
/// @brief The row for one reason.
[[nodiscard]] const reason_info& info(reason r) noexcept;
/// @brief The wire name of a reason, e.g. "no_such_entity".
[[nodiscard]] inline std::string_view name(reason r) noexcept {
    return info(r).name;
}
/// @brief The JSON-RPC code of a reason.
[[nodiscard]] inline int code(reason r) noexcept {
    return info(r).code;
}
/// @brief Looks a reason up by its wire name.
[[nodiscard]] std::optional<reason> reason_from_name(std::string_view name) noexcept;

/// @brief Thrown by method handlers to answer with an error; nothing was changed when it is thrown.
class rpc_error : public std::runtime_error {
  public:
    /// @brief An error with a reason, a one-sentence message and optional extra data members.
    rpc_error(reason why, const std::string& message, nlohmann::json data = nullptr)
        : std::runtime_error(message), reason_(why), data_(std::move(data)) {}
    /// @brief The reason this request failed.
    [[nodiscard]] reason why() const noexcept { return reason_; }
    /// @brief Extra members merged into error.data next to `reason` (null or an object).
    [[nodiscard]] const nlohmann::json& data() const noexcept { return data_; }

  private:
    reason reason_;
    nlohmann::json data_;
};

}  // namespace ecsd::protocol
