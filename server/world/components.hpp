#pragma once
// The world's built-in components. Units: metres, seconds, kilograms.
// Each is a plain struct plus one traits row (name and fields); JSON form,
// validation, schema and hashing come from that row (ecs/component_traits.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include "ecs/component_traits.hpp"

namespace ecsd::world {

using ecs::entity_ref;

/// @brief Where an entity is, in metres.
struct Position {
    double x = 0, y = 0;
};
/// @brief Metres per second.
struct Velocity {
    double x = 0, y = 0;
};
/// @brief Makes a mover feel gravity and collide with mass. mass in kg (0 = immovable),
/// restitution 0..1 (bounciness), gravity_scale multiplies the world's gravity.
struct RigidBody {
    double mass = 1, restitution = 0.5, gravity_scale = 1;
};
/// @brief A circle of `radius` metres. Two colliders touch when (a.layer & b.mask) and (b.layer & a.mask).
struct Collider {
    double radius = 0.5;
    std::uint32_t layer = 1, mask = 0xFFFFFFFFu;
};
/// @brief Entities this one overlaps, written every tick by collision detection.
struct Contacts {
    std::vector<entity_ref> entities;
};
/// @brief What the entity looks like to a client (a sprite name).
struct Appearance {
    std::string name;
};
struct Health {
    double hp = 100, max = 100;
};
/// @brief Marks a monster: `kill_all_monsters` destroys everything with Health and AI.
struct AI {
    std::string kind = "monster";
};
/// @brief Tag: the entity is a player.
struct Player {};
/// @brief Tag: the entity was frozen (its Velocity removed) by the freeze spell.
struct Frozen {};
/// @brief The ghost power-up: contacts with entities having any component named in
/// `passes` are dropped before collision response; removed when `remaining` seconds run out.
struct Ghost {
    std::vector<std::string> passes;
    double remaining = 5;
};
/// @brief A spell to cast; consumed by the spells system on the next tick.
/// target 0 means the caster itself; amount is spell-specific (0 = the spell's default).
struct MagicInput {
    std::string spell;
    entity_ref target;
    double amount = 0;
};
/// @brief Seconds until the entity is destroyed.
struct Lifetime {
    double remaining = 1;
};
/// @brief A body (RigidBody with mass) at rest since `seconds` (its island's count: the bodies it
/// rests with share it) near (x, y), where it came to rest. At rest_system::sleep_after it is
/// asleep: no gravity, movement or collision response moves it until something wakes it.
struct Resting {
    double seconds = 0;
    double x = 0, y = 0;
};
/// @brief A name unique in its world: wherever a request takes an entity id, it takes the name too.
struct Name {
    std::string name;
};

template <typename... T>
struct type_list {};
/// @brief Every built-in component, once, in registration order (which fixes their ids: append,
/// never reorder). world::world registers them with one fold; a type used but missing here is a loud
/// error (registry::registered_id), never undefined behaviour.
using builtin_components = type_list<Position, Velocity, RigidBody, Collider, Contacts, Appearance, Health,
                                     AI, Player, Frozen, Ghost, MagicInput, Lifetime, Name, Resting>;

}  // namespace ecsd::world

namespace ecsd::ecs {
#define ECSD_COMPONENT(T, ...)                                       \
    template <>                                                      \
    struct component_traits<world::T> {                              \
        using C = world::T;                                          \
        static constexpr const char* name = #T;                      \
        static constexpr auto fields = std::make_tuple(__VA_ARGS__); \
    }

ECSD_COMPONENT(Position, field("x", &C::x), field("y", &C::y));
ECSD_COMPONENT(Velocity, field("x", &C::x), field("y", &C::y));
// Components with a rule across their values also define check(), run on every value a client sends.
template <>
struct component_traits<world::RigidBody> {
    using C = world::RigidBody;
    static constexpr const char* name = "RigidBody";
    static constexpr auto fields =
        std::make_tuple(field("mass", &C::mass), field("restitution", &C::restitution),
                        field("gravity_scale", &C::gravity_scale));
    static void check(const C& v) {
        if (v.mass < 0)
            throw ecs_error(
                reason::invalid_value,
                "RigidBody.mass: expected a number >= 0 (0 = immovable), got " + json(v.mass).dump());
        if (v.restitution < 0 || v.restitution > 1)
            throw ecs_error(
                reason::invalid_value,
                "RigidBody.restitution: expected a number from 0 to 1, got " + json(v.restitution).dump());
    }
};
template <>
struct component_traits<world::Collider> {
    using C = world::Collider;
    static constexpr const char* name = "Collider";
    static constexpr auto fields =
        std::make_tuple(field("radius", &C::radius), field("layer", &C::layer), field("mask", &C::mask));
    static void check(const C& v) {
        if (v.radius < 0)
            throw ecs_error(reason::invalid_value,
                            "Collider.radius: expected a number >= 0, got " + json(v.radius).dump());
    }
};
ECSD_COMPONENT(Contacts, field("entities", &C::entities));
ECSD_COMPONENT(Appearance, field("name", &C::name));
ECSD_COMPONENT(Health, field("hp", &C::hp), field("max", &C::max));
ECSD_COMPONENT(AI, field("kind", &C::kind));
ECSD_COMPONENT(Player);
ECSD_COMPONENT(Frozen);
ECSD_COMPONENT(Ghost, field("passes", &C::passes), field("remaining", &C::remaining));
ECSD_COMPONENT(MagicInput, field("spell", &C::spell), field("target", &C::target),
               field("amount", &C::amount));
ECSD_COMPONENT(Lifetime, field("remaining", &C::remaining));
template <>
struct component_traits<world::Name> {
    using C = world::Name;
    static constexpr const char* name = "Name";
    static constexpr auto fields = std::make_tuple(field("name", &C::name));
    // bound, not check: a name stands where an id would and must never read as one, in a
    // restored world too.
    static void bound(const C& v) {
        const bool digits = !v.name.empty() && v.name.find_first_not_of("0123456789") == std::string::npos;
        if (v.name.empty() || v.name.size() > 64 || digits)
            throw ecs_error(
                reason::invalid_value,
                "Name.name: expected 1 to 64 characters, not all digits, got " + json(v.name).dump());
    }
};
template <>
struct component_traits<world::Resting> {
    using C = world::Resting;
    static constexpr const char* name = "Resting";
    static constexpr auto fields =
        std::make_tuple(field("seconds", &C::seconds), field("x", &C::x), field("y", &C::y));
    static void check(const C& v) {
        if (v.seconds < 0)
            throw ecs_error(reason::invalid_value,
                            "Resting.seconds: expected a number >= 0, got " + json(v.seconds).dump());
    }
};
#undef ECSD_COMPONENT
}  // namespace ecsd::ecs
