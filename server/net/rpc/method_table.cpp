#include "rpc/method_table.hpp"

#include <stdexcept>

#include "hosting/hosted_world.hpp"

namespace ecsd::net {

std::vector<std::string> flag_names(method_flags flags) {
    std::vector<std::string> out;
    if (has(flags, method_flags::read_only)) out.emplace_back("read_only");
    if (has(flags, method_flags::mutating)) out.emplace_back("mutating");
    if (has(flags, method_flags::admin)) out.emplace_back("admin");
    if (has(flags, method_flags::world_bound)) out.emplace_back("world_bound");
    if (has(flags, method_flags::pre_auth)) out.emplace_back("pre_auth");
    if (has(flags, method_flags::in_slices)) out.emplace_back("in_slices");
    if (has(flags, method_flags::opens_stream)) out.emplace_back("opens_stream");
    if (has(flags, method_flags::secret)) out.emplace_back("secret");
    if (has(flags, method_flags::background)) out.emplace_back("background");
    if (has(flags, method_flags::operator_only)) out.emplace_back("operator_only");
    if (has(flags, method_flags::action)) out.emplace_back("action");
    return out;
}

world::world& method_context::world() const {
    if (hosted == nullptr)
        throw std::logic_error("method_context::world() called by a method that is not world_bound");
    return hosted->world();
}

void method_table::add(method_info info) {
    if (info.name.empty() || !info.handler)
        throw std::invalid_argument("method_table: a method needs a name and a handler");
    if (index_.contains(info.name))
        throw std::invalid_argument("method_table: duplicate method " + info.name);
    if (has(info.flags, method_flags::read_only) &&
        (has(info.flags, method_flags::mutating) || has(info.flags, method_flags::admin))) {
        throw std::invalid_argument("method_table: " + info.name + " is read_only and mutating/admin");
    }
    if (has(info.flags, method_flags::in_slices) && !has(info.flags, method_flags::world_bound)) {
        throw std::invalid_argument("method_table: " + info.name + " runs in slices but is not world_bound");
    }
    if (has(info.flags, method_flags::entity_read) &&
        (!has(info.flags, method_flags::read_only) || !has(info.flags, method_flags::world_bound))) {
        // A typed read has no params tree: nothing may journal it or add to its params.
        throw std::invalid_argument("method_table: " + info.name +
                                    " reads typed params but is not a world read");
    }
    if (has(info.flags, method_flags::entity_read) && !entity_read_name_.empty()) {
        throw std::invalid_argument("method_table: " + info.name + " reads typed params, as " +
                                    entity_read_name_ + " does: the parser reads one method's so");
    }
    if (info.params.is_null()) info.params = nlohmann::json::object();
    if (info.result.is_null()) info.result = nlohmann::json::object();
    if (!info.params.is_object() || info.params.value("type", "object") != "object") {
        throw std::invalid_argument("method_table: params of " + info.name + " must be an object schema");
    }
    info.params["type"] = "object";
    if (has(info.flags, method_flags::world_bound) && !info.params["properties"].contains("world")) {
        info.params["properties"]["world"] = {{"type", "string"},
                                              {"minLength", 1},
                                              {"maxLength", 64},
                                              {"default", "default"},
                                              {"description", "name of the world; defaults to \"default\""}};
    }
    protocol::json_schema compiled;
    try {
        compiled = protocol::json_schema(info.params);
        (void)protocol::json_schema(info.result);  // checked for typos, never enforced at run time
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("method_table: " + info.name + ": " + e.what());
    }
    if (has(info.flags, method_flags::entity_read)) entity_read_name_ = info.name;
    index_.emplace(info.name, rows_.size());
    rows_.push_back(method_entry{std::move(info), std::move(compiled)});
}

const method_entry* method_table::find(std::string_view name) const noexcept {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &rows_[it->second];
}

nlohmann::json object_schema(nlohmann::json properties, const std::vector<std::string>& required) {
    nlohmann::json s{
        {"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
    if (!required.empty()) s["required"] = required;
    return s;
}

}  // namespace ecsd::net
