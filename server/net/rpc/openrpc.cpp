#include "rpc/openrpc.hpp"

#include <algorithm>

#include "ecsd/protocol/errors.hpp"
#include "ecsd/protocol/version.hpp"
#include "rpc/method_table.hpp"

namespace ecsd::net {

nlohmann::json make_openrpc(const method_table& table) {
    using nlohmann::json;
    json methods = json::array();
    for (const auto& m : table.methods()) {
        json params = json::array();
        const auto& props = m.params.value("properties", json::object());
        const auto required = m.params.value("required", json::array());
        for (const auto& [name, schema] : props.items()) {
            const bool is_required = std::find(required.begin(), required.end(), name) != required.end();
            json d{{"name", name}, {"required", is_required}, {"schema", schema}};
            if (schema.contains("description")) d["description"] = schema["description"];
            params.push_back(std::move(d));
        }
        methods.push_back({{"name", m.name},
                           {"summary", m.summary},
                           {"paramStructure", "by-name"},
                           {"params", std::move(params)},
                           {"result", {{"name", "result"}, {"schema", m.result}}},
                           {"x-flags", flag_names(m.flags)}});
    }
    json errors = json::object();
    for (const auto& r : protocol::all_reasons()) {
        errors[std::string(r.name)] = {
            {"code", r.code}, {"message", r.message}, {"data", {{"reason", r.name}}}};
    }
    return {{"openrpc", "1.2.6"},
            {"info",
             {{"title", "ecsd"},
              {"version", protocol::version},
              {"description",
               "JSON-RPC 2.0 over TCP, one JSON text per line. Errors carry error.data.reason, one of "
               "components.errors."}}},
            {"methods", std::move(methods)},
            {"components", {{"errors", std::move(errors)}}}};
}

}  // namespace ecsd::net
