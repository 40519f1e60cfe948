#pragma once
// The net boundary of the core's errors: the core and the world throw ecs::ecs_error with reasons
// of their own (they know nothing of the wire), and the pipeline answers each with the protocol's
// reason of the same name, found by that name, so there is no second table to keep in step.
// tests/unit/net/dispatcher_test.cpp checks every core reason has its row.

#include "ecs/error.hpp"
#include "ecsd/protocol/errors.hpp"

namespace ecsd::net {

/// @brief The wire reason a core reason is answered with (internal if the table lacked its name).
[[nodiscard]] inline protocol::reason wire_reason(ecs::reason r) noexcept {
    return protocol::reason_from_name(ecs::name(r)).value_or(protocol::reason::internal);
}

}  // namespace ecsd::net
