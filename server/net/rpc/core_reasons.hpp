#pragma once
// The net boundary of the core's errors: the core and the world throw ecs::ecs_error with reasons
// of their own (they know nothing of the wire), and the pipeline answers each with the protocol's
// reason of the same name. tests/unit/net/dispatcher_test.cpp checks the names agree.

#include "ecs/error.hpp"
#include "ecsd/protocol/errors.hpp"

namespace ecsd::net {

/// @brief The wire reason a core reason is answered with.
[[nodiscard]] constexpr protocol::reason wire_reason(ecs::reason r) noexcept {
    using protocol::reason;
    switch (r) {
        case ecs::reason::invalid_params:
            return reason::invalid_params;
        case ecs::reason::invalid_value:
            return reason::invalid_value;
        case ecs::reason::no_such_entity:
            return reason::no_such_entity;
        case ecs::reason::no_such_component:
            return reason::no_such_component;
        case ecs::reason::component_exists:
            return reason::component_exists;
        case ecs::reason::limit_reached:
            return reason::limit_reached;
        case ecs::reason::no_such_prefab:
            return reason::no_such_prefab;
        case ecs::reason::no_such_spell:
            return reason::no_such_spell;
        case ecs::reason::no_such_system:
            return reason::no_such_system;
    }
    return reason::internal;
}

}  // namespace ecsd::net
