#pragma once
// Header-only, so the fuzz targets (built in a tree of their own) include it by path too.

#include <cstddef>

#include <nlohmann/json.hpp>

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

}  // namespace ecsd::test
