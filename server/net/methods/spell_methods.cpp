// world.list_spells, world.cast_spell.
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

method_answer list_spells(method_context& ctx) {
    return {{"spells", ctx.world().list_spells()}};
}

method_answer cast_spell(method_context& ctx) {
    const auto caster = schemas::entity_param(ctx.world(), ctx.params, "caster");
    const auto spell = ctx.params.at("spell").get<std::string>();
    const auto target =
        ctx.params.contains("target") ? schemas::entity_param(ctx.world(), ctx.params, "target") : 0;
    const auto tick = ctx.world().cast_spell(caster, spell, target, ctx.params.value("amount", 0.0));
    return {{"caster", caster}, {"spell", spell}, {"takes_effect_at_tick", tick}};
}

}  // namespace

void register_spell_methods(method_table& table) {
    table.add({.name = "world.list_spells",
               .summary = "The spell table: name and description of every spell.",
               .params = object_schema(),
               .result = object_schema({{"spells", {{"type", "array"}}}}, {"spells"}),
               .flags = method_flags::world_bound | method_flags::read_only,
               .handler = list_spells});
    table.add(
        {.name = "world.cast_spell",
         .summary =
             "Queues a MagicInput on the caster; the spells system casts it at the start of the next tick.",
         .params = object_schema({{"caster", schemas::entity_ref()},
                                  {"spell", {{"type", "string"}}},
                                  {"target", schemas::entity_ref()},
                                  {"amount", {{"type", "number"}, {"minimum", 0}}}},
                                 {"caster", "spell"}),
         .result = object_schema({{"takes_effect_at_tick", {{"type", "integer"}}}}, {"takes_effect_at_tick"}),
         .flags = method_flags::world_bound | method_flags::mutating,
         .handler = cast_spell});
}

}  // namespace ecsd::net
