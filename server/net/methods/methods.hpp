#pragma once
// One registration function per family of methods, one file each (Redis's t_*.c). To add a
// family, see the comment at the top of method_table.hpp.

namespace ecsd::net {

class method_table;

/// @brief rpc.discover, server.ping, server.info, server.auth.
void register_server_methods(method_table& table);
/// @brief world.create/destroy/list/info/pause/resume/step/hash.
void register_world_methods(method_table& table);

/// @brief world.spawn_entity, world.spawn_entities, world.despawn_entity.
void register_entity_methods(method_table& table);
/// @brief world.get/insert/mutate/remove_components, world.list_components, world.register_component.
void register_component_methods(method_table& table);
/// @brief world.query.
void register_query_methods(method_table& table);
/// @brief world.list_systems, world.system_entities, world.enable/disable/run_system.
void register_system_methods(method_table& table);
/// @brief world.list_spells, world.cast_spell.
void register_spell_methods(method_table& table);
/// @brief world.define_prefab, world.spawn_prefab, world.list_prefabs.
void register_prefab_methods(method_table& table);

/// @brief world.define_system, world.remove_system, world.define_spell, world.remove_spell (Lua scripts).
void register_script_methods(method_table& table);

/// @brief world.save, world.load.
void register_persist_methods(method_table& table);
/// @brief world.watch, world.unwatch.
void register_watch_methods(method_table& table);

/// @brief debug.sleep (only with --enable-debug).
void register_debug_methods(method_table& table);

/// @brief Every family, in the order rpc.discover lists them.
void register_all_methods(method_table& table);

}  // namespace ecsd::net
