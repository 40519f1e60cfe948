#include "world/demo.hpp"

#include "world/world.hpp"

namespace ecsd::world {

namespace {
constexpr double half_width = 20;
constexpr double height = 24;

json at(double x, double y) {
    return {{"Position", {{"x", x}, {"y", y}}}};
}
json moving(double x, double y, double vx, double vy) {
    return {{"Position", {{"x", x}, {"y", y}}}, {"Velocity", {{"x", vx}, {"y", vy}}}};
}
}  // namespace

nlohmann::json demo_params() {
    return {{"bounds", {{"left", -half_width}, {"right", half_width}, {"bottom", 0}, {"top", height}}}};
}

void populate_demo(world& w) {
    w.define_prefab("slime", {{"Position", json::object()},
                              {"RigidBody", {{"mass", 1}, {"restitution", 0.6}}},
                              {"Collider", {{"radius", 0.5}}},
                              {"Health", {{"hp", 30}, {"max", 30}}},
                              {"AI", {{"kind", "slime"}}},
                              {"Appearance", {{"name", "slime"}}}});
    w.define_prefab("wisp", {{"Position", json::object()},
                             {"Velocity", {{"x", 4}, {"y", 3}}},
                             {"Collider", {{"radius", 0.3}}},
                             {"Appearance", {{"name", "wisp"}}}});
    w.define_prefab(
        "tree",
        {{"Position", json::object()}, {"Collider", {{"radius", 0.8}}}, {"Appearance", {{"name", "tree"}}}});

    // Trees stand on the ground; the player stands among them.
    for (const double x : {-15.0, -7.0, 6.0, 14.0}) w.spawn_prefab("tree", 1, at(x, 0.8));
    w.spawn({{"Position", {{"x", 0}, {"y", 0.5}}},
             {"RigidBody", {{"mass", 80}, {"restitution", 0.2}}},
             {"Collider", {{"radius", 0.5}}},
             {"Health", json::object()},
             {"Player", json::object()},
             {"Appearance", {{"name", "hero"}}}});
    // Slimes dropped from different heights, drifting sideways: they bounce, then rest.
    for (int i = 0; i < 12; ++i) {
        const double x = -18 + 3.2 * i;
        w.spawn_prefab("slime", 1, moving(x, 8 + (i * 7) % 13, (i % 2 ? 1.5 : -1.5), 0));
    }
    // Wisps feel no gravity (no RigidBody) and bounce off the walls without loss: the world keeps moving.
    for (int i = 0; i < 6; ++i) {
        const double vx = (i % 2 ? 1 : -1) * (3 + i * 0.7);
        const double vy = (i % 3 ? 1 : -1) * (2 + i * 0.5);
        w.spawn_prefab("wisp", 1, moving(-12 + 5 * i, 6 + 2.5 * i, vx, vy));
    }
}

}  // namespace ecsd::world
