#include "methods.hpp"

namespace ecsd::net {

void register_all_methods(method_table& table) {
    register_server_methods(table);
    register_world_methods(table);
    register_entity_methods(table);
    register_component_methods(table);
    register_query_methods(table);
    register_system_methods(table);
    register_spell_methods(table);
    register_prefab_methods(table);
    register_script_methods(table);
    register_persist_methods(table);
    register_watch_methods(table);
    register_debug_methods(table);
}

}  // namespace ecsd::net
