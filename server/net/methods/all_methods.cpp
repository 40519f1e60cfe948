#include "methods.hpp"

namespace ecsd::net {

void register_all_methods(method_table& table) {
    register_server_methods(table);
    register_world_methods(table);
    // entity / component / query / system / spell / prefab families register here.
}

}  // namespace ecsd::net
