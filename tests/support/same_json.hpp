#pragma once
// Header-only, so the fuzz targets (built in a tree of their own) include it by path too.

#include <cstddef>
#include <variant>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/jsonrpc.hpp"

namespace ecsd::test {

/// @brief Equal values with equal types at every node (json's == calls 1 and 1.0 equal), and
/// both discarded or neither: how two parsers' readings of one text are compared.
inline bool same_json(const nlohmann::json& a, const nlohmann::json& b) {
    if (a.type() != b.type()) return false;
    if (a.is_object()) {
        if (a.size() != b.size()) return false;
        for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
            if (i.key() != j.key() || !same_json(*i, *j)) return false;
        return true;
    }
    if (a.is_array()) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!same_json(a[i], b[i])) return false;
        return true;
    }
    return a.is_discarded() || a == b;
}

/// @brief Two readings of one line (protocol::parse_line and parse_line_tree) give the same
/// messages: the same requests (id, method, params, notification) and the same refusals. Params
/// read typed count as the tree they stand for.
inline bool same_parsed_line(const protocol::parsed_line& a, const protocol::parsed_line& b) {
    if (a.batch != b.batch || a.messages.size() != b.messages.size()) return false;
    for (std::size_t i = 0; i < a.messages.size(); ++i) {
        const auto& x = a.messages[i];
        const auto& y = b.messages[i];
        if (x.index() != y.index()) return false;
        if (const auto* r = std::get_if<protocol::request>(&x)) {
            const auto& s = std::get<protocol::request>(y);
            // Params read typed (protocol::entity_read) stand for the tree the parser would have built.
            const auto params = [](const protocol::request& q) {
                return q.read ? protocol::to_params(*q.read) : q.params;
            };
            if (!same_json(r->id, s.id) || r->notification != s.notification || r->method != s.method ||
                (r->read && !r->params.is_null()) || (s.read && !s.params.is_null()) ||
                !same_json(params(*r), params(s)))
                return false;
        } else {
            const auto& m = std::get<protocol::bad_message>(x);
            const auto& n = std::get<protocol::bad_message>(y);
            if (!same_json(m.id, n.id) || m.why != n.why || m.detail != n.detail ||
                !same_json(m.data, n.data))
                return false;
        }
    }
    return true;
}

}  // namespace ecsd::test
