#include "ecsd/protocol/json_schema.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace ecsd::protocol {
namespace internal {

using nlohmann::json;

enum type_bit : std::uint8_t {
    t_null = 1,
    t_boolean = 2,
    t_integer = 4,
    t_number = 8,  // any number, integer or not
    t_string = 16,
    t_array = 32,
    t_object = 64,
};

struct schema_node {
    std::uint8_t types = 0;  // 0: any type
    // Two parallel vectors, not pair<string, schema_node>: a pair needs the complete type here,
    // which clang (with libstdc++) refuses inside the class.
    std::vector<std::string> property_names;
    std::vector<schema_node> property_nodes;
    std::vector<std::string> required;
    bool additional_allowed = true;
    std::unique_ptr<schema_node> additional;  // schema for properties not listed
    std::unique_ptr<schema_node> items;
    std::optional<std::size_t> min_items, max_items, min_length, max_length, min_props, max_props;
    std::optional<json> minimum, maximum, exclusive_minimum, exclusive_maximum;
    std::optional<json> enum_values;
    std::optional<json> const_value;
    std::vector<schema_node> any_of, one_of;
};

namespace {

constexpr std::array<std::pair<std::string_view, std::uint8_t>, 7> type_names{{
    {"null", t_null},
    {"boolean", t_boolean},
    {"integer", t_integer},
    {"number", t_number},
    {"string", t_string},
    {"array", t_array},
    {"object", t_object},
}};

std::uint8_t type_bit_of(const json& name) {
    if (name.is_string()) {
        for (const auto& [n, bit] : type_names) {
            if (n == name.get_ref<const std::string&>()) return bit;
        }
    }
    throw std::invalid_argument("json_schema: unknown type " + name.dump());
}

std::size_t count_of(const json& v, const char* keyword) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
        throw std::invalid_argument(std::string("json_schema: ") + keyword +
                                    " must be a non-negative integer");
    }
    return v.get<std::size_t>();
}

bool is_annotation(std::string_view key) {
    return key == "title" || key == "description" || key == "default" || key == "examples" ||
           key == "format" || key == "$comment" || key == "$schema" || key.starts_with("x-");
}

schema_node compile(const json& s);

std::vector<schema_node> compile_list(const json& v, const char* keyword) {
    if (!v.is_array() || v.empty()) {
        throw std::invalid_argument(std::string("json_schema: ") + keyword + " must be a non-empty array");
    }
    std::vector<schema_node> out;
    for (const auto& e : v) out.push_back(compile(e));
    return out;
}

schema_node compile(const json& s) {
    schema_node n;
    if (s.is_boolean()) {
        if (!s.get<bool>()) n.enum_values = json::array();  // `false` accepts nothing
        return n;
    }
    if (!s.is_object()) throw std::invalid_argument("json_schema: a schema must be an object or a boolean");
    for (const auto& [key, v] : s.items()) {
        if (key == "type") {
            if (v.is_array()) {
                for (const auto& t : v) n.types |= type_bit_of(t);
            } else {
                n.types = type_bit_of(v);
            }
        } else if (key == "properties") {
            for (const auto& [name, sub] : v.items()) {
                n.property_names.push_back(name);
                n.property_nodes.push_back(compile(sub));
            }
        } else if (key == "required") {
            for (const auto& r : v) n.required.push_back(r.get<std::string>());
        } else if (key == "additionalProperties") {
            if (v.is_boolean()) {
                n.additional_allowed = v.get<bool>();
            } else {
                n.additional = std::make_unique<schema_node>(compile(v));
            }
        } else if (key == "items") {
            n.items = std::make_unique<schema_node>(compile(v));
        } else if (key == "minItems") {
            n.min_items = count_of(v, "minItems");
        } else if (key == "maxItems") {
            n.max_items = count_of(v, "maxItems");
        } else if (key == "minLength") {
            n.min_length = count_of(v, "minLength");
        } else if (key == "maxLength") {
            n.max_length = count_of(v, "maxLength");
        } else if (key == "minProperties") {
            n.min_props = count_of(v, "minProperties");
        } else if (key == "maxProperties") {
            n.max_props = count_of(v, "maxProperties");
        } else if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
                   key == "exclusiveMaximum") {
            if (!v.is_number()) throw std::invalid_argument("json_schema: " + key + " must be a number");
            (key == "minimum"            ? n.minimum
             : key == "maximum"          ? n.maximum
             : key == "exclusiveMinimum" ? n.exclusive_minimum
                                         : n.exclusive_maximum) = v;
        } else if (key == "enum") {
            if (!v.is_array()) throw std::invalid_argument("json_schema: enum must be an array");
            n.enum_values = v;
        } else if (key == "const") {
            n.const_value = v;
        } else if (key == "anyOf") {
            n.any_of = compile_list(v, "anyOf");
        } else if (key == "oneOf") {
            n.one_of = compile_list(v, "oneOf");
        } else if (!is_annotation(key)) {
            throw std::invalid_argument("json_schema: unsupported keyword " + key);
        }
    }
    return n;
}

std::uint8_t type_bits_of(const json& v) noexcept {
    switch (v.type()) {
        case json::value_t::null:
            return t_null;
        case json::value_t::boolean:
            return t_boolean;
        case json::value_t::number_integer:
        case json::value_t::number_unsigned:
            return t_integer | t_number;
        case json::value_t::number_float:
            return t_number;
        case json::value_t::string:
            return t_string;
        case json::value_t::array:
            return t_array;
        case json::value_t::object:
            return t_object;
        default:
            return 0;
    }
}

std::string type_list(std::uint8_t bits) {
    std::string out;
    for (const auto& [name, bit] : type_names) {
        if ((bits & bit) != 0) {
            if (!out.empty()) out += " or ";
            out += name;
        }
    }
    return out;
}

std::size_t utf8_length(const std::string& s) noexcept {
    std::size_t n = 0;
    for (const unsigned char c : s) n += (c & 0xC0U) != 0x80U;
    return n;
}

// Builds the location text only when an error is reported.
struct path {
    const path* parent;
    std::string_view key;
    std::size_t index;
    bool is_index;

    [[nodiscard]] std::string text() const {
        std::string prefix = parent ? parent->text() : std::string();
        if (!parent) return std::string(key);
        if (is_index) return prefix + "[" + std::to_string(index) + "]";
        return prefix + "." + std::string(key);
    }
};

std::optional<std::string> fail(const path& at, const std::string& what) {
    return at.text() + ": " + what;
}

/// @brief "expected an integer from 0 to 9007199254740991, got ..." for a fraction or a number an integer
///        field cannot hold: the allowed range, and the value only when it is no integer (1.5, 1.0); a
///        whole number beyond the range (1e300) reads "a number outside that range", never as 1e+300.
std::string integer_expected(const schema_node& n, const json& v) {
    std::string range;
    if (n.minimum && n.maximum) {
        range = " from " + n.minimum->dump() + " to " + n.maximum->dump();
    } else if (n.minimum) {
        range = " >= " + n.minimum->dump();
    } else if (n.maximum) {
        range = " <= " + n.maximum->dump();
    }
    const double d = v.get<double>();
    const bool beyond = (n.minimum && d < n.minimum->get<double>()) ||
                        (n.maximum && d > n.maximum->get<double>()) || std::fabs(d) >= 9223372036854775808.0;
    const std::string got =
        beyond ? (range.empty() ? "a number too large for an integer" : "a number outside that range")
               : v.dump();
    return "expected an integer" + range + ", got " + got;
}

/// @brief v < bound, exactly. nlohmann compares an unsigned value past INT64_MAX with a signed
/// bound as a negative number (2^63 "< 0"), so unsigned values are compared as unsigned here.
bool below(const json& v, const json& bound) {
    if (v.is_number_unsigned() && bound.is_number_integer()) {
        const auto b = bound.get<std::int64_t>();
        return b > 0 && v.get<std::uint64_t>() < static_cast<std::uint64_t>(b);
    }
    return v < bound;
}
bool above(const json& v, const json& bound) {
    if (v.is_number_unsigned() && bound.is_number_integer()) {
        const auto b = bound.get<std::int64_t>();
        return b < 0 || v.get<std::uint64_t>() > static_cast<std::uint64_t>(b);
    }
    return v > bound;
}

/// @brief A whole number outside an integer field's range: the value and the range, in one message
/// ("9223372036854775808 is out of range: expected an integer from 0 to 9007199254740991").
std::optional<std::string> out_of_range(const schema_node& n, const json& v, const path& at) {
    if (!n.minimum || !n.maximum || !v.is_number_integer()) return std::nullopt;
    return fail(at, v.dump() + " is out of range: expected an integer from " + n.minimum->dump() + " to " +
                        n.maximum->dump());
}

std::optional<std::string> check(const schema_node& n, const json& v, const path& at) {
    const std::uint8_t bits = type_bits_of(v);
    if (n.types != 0 && (n.types & bits) == 0) {
        if (v.is_number_float() && (n.types & t_integer) != 0 && (n.types & ~(t_integer | t_number)) == 0)
            return fail(at, integer_expected(n, v));
        return fail(at, "expected " + type_list(n.types) + ", got " + std::string(v.type_name()));
    }
    if (n.enum_values) {
        bool found = false;
        for (const auto& e : *n.enum_values) found = found || e == v;
        if (!found) return fail(at, "must be one of " + n.enum_values->dump());
    }
    if (n.const_value && *n.const_value != v) return fail(at, "must be " + n.const_value->dump());
    if (v.is_number()) {
        const bool low = n.minimum && below(v, *n.minimum);
        const bool high = n.maximum && above(v, *n.maximum);
        // A huge integer (an id past 2^53, 2^63) says it is out of range, never "must be >= 0".
        if ((low || high) && v.get<double>() >= 9007199254740992.0) {
            if (auto range = out_of_range(n, v, at)) return range;
        }
        if (low) return fail(at, "must be >= " + n.minimum->dump());
        if (high) return fail(at, "must be <= " + n.maximum->dump());
        if (n.exclusive_minimum && !above(v, *n.exclusive_minimum))
            return fail(at, "must be > " + n.exclusive_minimum->dump());
        if (n.exclusive_maximum && !below(v, *n.exclusive_maximum))
            return fail(at, "must be < " + n.exclusive_maximum->dump());
    } else if (v.is_string()) {
        if (n.min_length || n.max_length) {
            const auto len = utf8_length(v.get_ref<const std::string&>());
            if (n.min_length && len < *n.min_length)
                return fail(at, "must have at least " + std::to_string(*n.min_length) + " characters");
            if (n.max_length && len > *n.max_length)
                return fail(at, "must have at most " + std::to_string(*n.max_length) + " characters");
        }
    } else if (v.is_array()) {
        if (n.min_items && v.size() < *n.min_items)
            return fail(at, "must have at least " + std::to_string(*n.min_items) + " items");
        if (n.max_items && v.size() > *n.max_items)
            return fail(at, "must have at most " + std::to_string(*n.max_items) + " items");
        if (n.items) {
            for (std::size_t i = 0; i < v.size(); ++i) {
                if (auto e = check(*n.items, v[i], path{&at, {}, i, true})) return e;
            }
        }
    } else if (v.is_object()) {
        if (n.min_props && v.size() < *n.min_props)
            return fail(at, "must have at least " + std::to_string(*n.min_props) + " members");
        if (n.max_props && v.size() > *n.max_props)
            return fail(at, "must have at most " + std::to_string(*n.max_props) + " members");
        for (const auto& r : n.required) {
            if (!v.contains(r)) return fail(at, "missing required member '" + r + "'");
        }
        for (auto it = v.begin(); it != v.end(); ++it) {
            const schema_node* sub = nullptr;
            for (std::size_t p = 0; p < n.property_names.size(); ++p) {
                if (n.property_names[p] == it.key()) {
                    sub = &n.property_nodes[p];
                    break;
                }
            }
            const path member{&at, it.key(), 0, false};
            if (sub == nullptr) {
                if (!n.additional_allowed) return fail(member, "unknown member");
                sub = n.additional.get();
            }
            if (sub != nullptr) {
                if (auto e = check(*sub, it.value(), member)) return e;
            }
        }
    }
    if (!n.any_of.empty()) {
        std::optional<std::string> first;
        bool ok = false;
        for (const auto& alt : n.any_of) {
            auto e = check(alt, v, at);
            if (!e) {
                ok = true;
                break;
            }
            if (!first) first = std::move(e);
        }
        if (!ok) return first;
    }
    if (!n.one_of.empty()) {
        std::size_t matches = 0;
        std::optional<std::string> first;
        for (const auto& alt : n.one_of) {
            auto e = check(alt, v, at);
            if (!e) {
                ++matches;
            } else if (!first) {
                first = std::move(e);
            }
        }
        if (matches == 0) return first;
        if (matches > 1) return fail(at, "matches more than one alternative");
    }
    return std::nullopt;
}

}  // namespace
}  // namespace internal

json_schema::json_schema()
    : source_(nlohmann::json::object()), root_(std::make_shared<internal::schema_node>()) {}

json_schema::json_schema(const nlohmann::json& schema)
    : source_(schema), root_(std::make_shared<internal::schema_node>(internal::compile(schema))) {}

std::optional<std::string> json_schema::validate(const nlohmann::json& value, std::string_view root) const {
    return internal::check(*root_, value, internal::path{nullptr, root, 0, false});
}

}  // namespace ecsd::protocol
