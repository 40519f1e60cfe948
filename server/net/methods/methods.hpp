#pragma once
// One registration function per family of methods, one file each (Redis's t_*.c). To add a
// family, see the comment at the top of method_table.hpp.

namespace ecsd::net {

class method_table;

/// @brief rpc.discover, server.ping, server.info, server.auth.
void register_server_methods(method_table& table);
/// @brief world.create/destroy/list/info/pause/resume/step/hash.
void register_world_methods(method_table& table);

/// @brief Every family, in the order rpc.discover lists them.
void register_all_methods(method_table& table);

}  // namespace ecsd::net
