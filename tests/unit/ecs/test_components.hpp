#pragma once
// Small components for the core's tests, described like the world's built-ins.

#include <string>
#include <vector>

#include "ecs/component_traits.hpp"

namespace test {
struct Position {
    float x = 0, y = 0;
};
struct Velocity {
    float x = 0, y = 0;
};
struct Health {
    std::int32_t hp = 100;
    std::int32_t max = 100;
};
struct Named {
    std::string name;
    std::vector<double> samples;
    ecsd::ecs::entity_ref target;
    bool flag = false;
};
struct Player {};
struct Physical {};
struct Visible {};
}  // namespace test

namespace ecsd::ecs {
template <>
struct component_traits<test::Position> {
    static constexpr const char* name = "Position";
    static constexpr auto fields =
        std::make_tuple(field("x", &test::Position::x), field("y", &test::Position::y));
};
template <>
struct component_traits<test::Velocity> {
    static constexpr const char* name = "Velocity";
    static constexpr auto fields =
        std::make_tuple(field("x", &test::Velocity::x), field("y", &test::Velocity::y));
};
template <>
struct component_traits<test::Health> {
    static constexpr const char* name = "Health";
    static constexpr auto fields =
        std::make_tuple(field("hp", &test::Health::hp), field("max", &test::Health::max));
};
template <>
struct component_traits<test::Named> {
    static constexpr const char* name = "Named";
    static constexpr auto fields =
        std::make_tuple(field("name", &test::Named::name), field("samples", &test::Named::samples),
                        field("target", &test::Named::target), field("flag", &test::Named::flag));
};
template <>
struct component_traits<test::Player> {
    static constexpr const char* name = "Player";
    static constexpr auto fields = std::tuple<>{};
};
template <>
struct component_traits<test::Physical> {
    static constexpr const char* name = "Physical";
    static constexpr auto fields = std::tuple<>{};
};
template <>
struct component_traits<test::Visible> {
    static constexpr const char* name = "Visible";
    static constexpr auto fields = std::tuple<>{};
};
}  // namespace ecsd::ecs
