#pragma once
// The one exception type the ECS core and the world throw. The core knows nothing of the wire: its
// reasons are its own, and the network layer maps each to the protocol's reason of the same name
// (net/rpc/core_reasons.hpp), where a test checks that every one has a row in the reason table.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ecsd::ecs {

/// @brief Why the core or the world refused a request.
enum class reason : std::uint8_t {
    invalid_params,     ///< a request's shape is wrong (a bad query, an unknown setting)
    invalid_value,      ///< a value does not fit its field or component
    no_such_entity,     ///< the id names no live entity
    no_such_component,  ///< the name names no registered component
    component_exists,   ///< the entity has the component already
    limit_reached,      ///< a bound (entities, components, sizes) would be passed
    no_such_prefab,     ///< the name names no prefab
    no_such_spell,      ///< the name names no spell
    no_such_system,     ///< the name names no system
    no_such_action,     ///< the name names no action
    action_failed,      ///< an action raised an error: nothing of it applied
};

/// @brief The reason's name ("no_such_entity"): the same word the wire uses for it.
[[nodiscard]] constexpr std::string_view name(reason r) noexcept {
    switch (r) {
        case reason::invalid_params:
            return "invalid_params";
        case reason::invalid_value:
            return "invalid_value";
        case reason::no_such_entity:
            return "no_such_entity";
        case reason::no_such_component:
            return "no_such_component";
        case reason::component_exists:
            return "component_exists";
        case reason::limit_reached:
            return "limit_reached";
        case reason::no_such_prefab:
            return "no_such_prefab";
        case reason::no_such_spell:
            return "no_such_spell";
        case reason::no_such_system:
            return "no_such_system";
        case reason::no_such_action:
            return "no_such_action";
        case reason::action_failed:
            return "action_failed";
    }
    return "invalid_params";
}

/// @brief A request the core refuses; nothing was changed when it is thrown.
class ecs_error : public std::runtime_error {
  public:
    ecs_error(reason why, const std::string& message) : std::runtime_error(message), reason_(why) {}
    /// @brief Why the request was refused.
    [[nodiscard]] reason why() const noexcept { return reason_; }
    /// @brief The reason's name, e.g. "no_such_entity".
    [[nodiscard]] std::string_view reason_name() const noexcept { return name(reason_); }

  private:
    reason reason_;
};

}  // namespace ecsd::ecs
