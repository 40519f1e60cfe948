// world.*: placeholder until ecsd::world::World lands.
#include "method_table.hpp"
#include "methods.hpp"

namespace ecsd::net {

void register_world_methods(method_table&) {}

}  // namespace ecsd::net
