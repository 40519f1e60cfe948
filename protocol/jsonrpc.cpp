#include "ecsd/protocol/jsonrpc.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <type_traits>
#include <utility>

#include "ecsd/protocol/ids.hpp"
#include "ecsd/protocol/json_parse.hpp"

namespace ecsd::protocol {
namespace {

using nlohmann::json;

// JSON-RPC ids are strings, integers or null: a fraction, or an integer too large for 64 bits
// (which the parser turns into a double), could not be echoed as sent.
bool valid_id(const json& id) noexcept {
    return id.is_string() || id.is_number_integer() || id.is_null();
}

bad_message bad(json id, reason why, std::string detail, json data = nullptr) {
    return bad_message{std::move(id), why, std::move(detail), std::move(data)};
}

}  // namespace

namespace {
// A request's members, read by either parser: nlohmann's tree (the values are moved out) or
// simdjson's DOM (the values are built as nlohmann's parser would build them).
json take(json& v) {
    return std::move(v);
}
json take(simdjson::dom::element v) {
    json out;
    build(v, out);
    return out;
}
bool is_string(const json& v) {
    return v.is_string();
}
bool is_string(simdjson::dom::element v) {
    return v.is_string();
}
std::string_view text(const json& v) {
    return v.get_ref<const std::string&>();
}
std::string_view text(simdjson::dom::element v) {
    return std::string_view(v);
}
bool is_container(const json& v) {
    return v.is_object() || v.is_array();
}
bool is_container(simdjson::dom::element v) {
    return v.is_object() || v.is_array();
}

// params as an entity_read, or nothing where they are not of its exact shape (then they become a
// tree, which the method's schema judges). Every bound is the schema's or tighter: a name's bytes
// are at least its characters, so at most 64 bytes is at most 64 characters.
std::optional<entity_read> read_entity(simdjson::dom::element params) {
    if (!params.is_object()) return std::nullopt;
    entity_read out;
    bool has_entity = false;
    const auto name = [](simdjson::dom::element v) -> std::optional<std::string> {
        if (!v.is_string()) return std::nullopt;
        const auto text = std::string_view(v);
        if (text.size() > entity_read::max_name_bytes) return std::nullopt;
        return std::string(text);
    };
    for (const auto field : simdjson::dom::object(params)) {
        if (field.key == "entity" && !has_entity) {
            std::uint64_t id = 0;
            if (field.value.is_uint64()) {
                id = std::uint64_t(field.value);
            } else if (field.value.is_int64() && std::int64_t(field.value) >= 0) {
                id = static_cast<std::uint64_t>(std::int64_t(field.value));
            } else {
                return std::nullopt;  // a Name, a fraction, a negative number: the tree's way
            }
            if (id > max_entity_id) return std::nullopt;
            out.entity = id;
            has_entity = true;
        } else if (field.key == "world" && !out.world) {
            out.world = name(field.value);
            if (!out.world || out.world->empty()) return std::nullopt;
        } else if (field.key == "components" && !out.components) {
            if (!field.value.is_array()) return std::nullopt;
            const auto items = simdjson::dom::array(field.value);
            if (items.size() > entity_read::max_names) return std::nullopt;
            auto& names = out.components.emplace();
            names.reserve(items.size());
            for (const auto item : items) {
                auto n = name(item);
                if (!n) return std::nullopt;
                names.push_back(std::move(*n));
            }
        } else {
            return std::nullopt;  // another member, or one given twice
        }
    }
    if (!has_entity) return std::nullopt;
    return out;
}

// The envelope's checks, in one order with one set of answers for both readings; a member is
// null when the request does not have it.
template <typename V>
message checked_request(V* id, V* version, V* method, V* params, std::string_view entity_read_method = {}) {
    json id_value = nullptr;
    if (id != nullptr) {
        id_value = take(*id);
        if (!valid_id(id_value))
            return bad(nullptr, reason::invalid_request,
                       "id must be a string, an integer (64 bits at most) or null");
    }
    if (version == nullptr || !is_string(*version) || text(*version) != "2.0")
        return bad(std::move(id_value), reason::invalid_request, R"(jsonrpc must be "2.0")");
    if (method == nullptr || !is_string(*method))
        return bad(std::move(id_value), reason::invalid_request, "method must be a string");
    request out;
    if (params != nullptr) {
        if (!is_container(*params))
            return bad(std::move(id_value), reason::invalid_request, "params must be an object or an array");
        if constexpr (std::is_same_v<V,
                                     simdjson::dom::element>) {  // a tree is built already: nothing to save
            if (!entity_read_method.empty() && text(*method) == entity_read_method)
                out.read = read_entity(*params);
        }
        if (!out.read) out.params = take(*params);
    }
    out.method = std::string(text(*method));
    out.id = std::move(id_value);
    out.notification = id == nullptr;
    return out;
}

// to_message() over simdjson's DOM: only the id and the params become nlohmann values; the
// envelope around them is never built.
message dom_to_message(simdjson::dom::element e, std::string_view entity_read_method) {
    if (!e.is_object()) return bad(nullptr, reason::invalid_request, "a request must be a JSON object");
    simdjson::dom::element id, version, method, params;
    simdjson::dom::element *has_id = nullptr, *has_version = nullptr, *has_method = nullptr,
                           *has_params = nullptr;
    for (const auto field : simdjson::dom::object(e)) {  // a repeated key: its last value, as in a tree
        if (field.key == "id") {
            id = field.value;
            has_id = &id;
        } else if (field.key == "jsonrpc") {
            version = field.value;
            has_version = &version;
        } else if (field.key == "method") {
            method = field.value;
            has_method = &method;
        } else if (field.key == "params") {
            params = field.value;
            has_params = &params;
        }
    }
    return checked_request(has_id, has_version, has_method, has_params, entity_read_method);
}
}  // namespace

json to_params(const entity_read& read) {
    json out = {{"entity", read.entity}};
    if (read.world) out["world"] = *read.world;
    if (read.components) out["components"] = *read.components;
    return out;
}

message to_message(json&& value) {
    if (!value.is_object()) return bad(nullptr, reason::invalid_request, "a request must be a JSON object");
    const auto member = [&](const char* key) {
        const auto it = value.find(key);
        return it == value.end() ? nullptr : &*it;
    };
    return checked_request(member("id"), member("jsonrpc"), member("method"), member("params"));
}

std::string invalid_json_text(std::string_view line) {
    // Parsed again with exceptions only to learn where it failed (bad input is rare). The answer
    // is our own words: a byte offset and what was there, never the library's message.
    try {
        const json again = json::parse(line);
        (void)again;
    } catch (const json::parse_error& e) {
        const std::size_t at = e.byte == 0 ? 1 : e.byte;  // 1-based: the byte the parser stopped at
        if (at > line.size())
            return "invalid JSON at byte " + std::to_string(line.size() + 1) + ": unexpected end of input";
        const auto c = static_cast<unsigned char>(line[at - 1]);
        static constexpr char hex[] = "0123456789abcdef";
        const std::string shown = (c >= 0x20 && c < 0x7f)
                                      ? "'" + std::string(1, static_cast<char>(c)) + "'"
                                      : std::string("byte 0x") + hex[c >> 4U] + hex[c & 0xfU];
        return "invalid JSON at byte " + std::to_string(at) + ": unexpected " + shown;
    } catch (const json::out_of_range&) {
        return "invalid JSON: a number too large to represent (beyond 1.8e308)";
    } catch (const json::exception&) {
    }
    return "invalid JSON";
}

namespace {
// The checks made before any parser reads the line; a refusal is the line's one message.
std::optional<bad_message> refuse_before_parsing(std::string_view line, const parse_limits& limits) {
    if (exceeds_depth(line, limits.max_depth))
        return bad(nullptr, reason::invalid_request, "nesting deeper than the limit",
                   json{{"limit", limits.max_depth}});
    // The parser would stop at a NUL and run what came before it: a line with one is not JSON.
    if (const auto nul = line.find('\0'); nul != std::string_view::npos)
        return bad(nullptr, reason::parse_error,
                   "invalid JSON at byte " + std::to_string(nul + 1) + ": a NUL byte");
    return std::nullopt;
}

std::optional<bad_message> refuse_batch(std::size_t size, const parse_limits& limits) {
    if (size == 0) return bad(nullptr, reason::invalid_request, "empty batch");
    if (size > limits.max_batch)
        return bad(nullptr, reason::limit_reached, "batch has too many elements",
                   json{{"limit", limits.max_batch}});
    return std::nullopt;
}

parsed_line one(message m) {
    parsed_line out;
    out.messages.emplace_back(std::move(m));
    return out;
}
}  // namespace

parsed_line parse_line(std::string_view line, const parse_limits& limits) {
    if (auto refused = refuse_before_parsing(line, limits)) return one(std::move(*refused));
    simdjson::dom::element root;
    if (!read_dom(line, root)) return parse_line_tree(line, limits);
    // The common case: read from simdjson's DOM, with no tree built for the envelope.
    parsed_line out;
    if (!root.is_array()) {
        out = one(dom_to_message(root, limits.entity_read_method));
    } else if (const auto items = simdjson::dom::array(root);
               auto refused = refuse_batch(items.size(), limits)) {
        out = one(std::move(*refused));
    } else {
        out.batch = true;
        out.messages.reserve(items.size());
        for (const auto item : items)
            out.messages.emplace_back(dom_to_message(item, limits.entity_read_method));
    }
    release_large_dom();  // the messages own their values: the DOM is done with
    return out;
}

parsed_line parse_line_tree(std::string_view line, const parse_limits& limits) {
    if (auto refused = refuse_before_parsing(line, limits)) return one(std::move(*refused));
    json value = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) return one(bad(nullptr, reason::parse_error, invalid_json_text(line)));
    if (!value.is_array()) return one(to_message(std::move(value)));
    if (auto refused = refuse_batch(value.size(), limits)) return one(std::move(*refused));
    parsed_line out;
    out.batch = true;
    out.messages.reserve(value.size());
    for (auto& element : value) out.messages.emplace_back(to_message(std::move(element)));
    return out;
}

json error_object(reason why, std::string_view detail, const json& data) {
    const auto& row = info(why);
    json error_data = json::object();
    error_data["reason"] = row.name;
    if (data.is_object()) {
        for (const auto& [key, val] : data.items()) {
            if (key != "reason") error_data[key] = val;
        }
    }
    return json{{"code", row.code},
                {"message", detail.empty() ? row.message : detail},
                {"data", std::move(error_data)}};
}

namespace {
/// @brief True when `s` has nothing to escape (printable ASCII, no quote or backslash): the
/// serializer writes it as it is, between quotes.
bool plain_string(std::string_view s) noexcept {
    return std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
    });
}

/// @brief Appends `s` as a JSON string when it has nothing to escape, which is what the serializer
/// would write; false, and nothing appended, otherwise.
bool append_plain_string(std::string& out, std::string_view s) {
    if (!plain_string(s)) return false;
    out += '"';
    out += s;
    out += '"';
    return true;
}

/// @brief True when `v` holds only what write_simple() writes byte for byte as the serializer
/// does: objects and arrays (at most `depth` deep) of plain strings, integers, booleans and null.
/// Doubles and strings to escape are left to the serializer, whose layout is the reference.
bool simple(const json& v, int depth) noexcept {
    switch (v.type()) {
        case json::value_t::null:
        case json::value_t::boolean:
        case json::value_t::number_integer:
        case json::value_t::number_unsigned:
            return true;
        case json::value_t::string:
            return plain_string(v.get_ref<const std::string&>());
        case json::value_t::object:
            if (depth == 0) return false;
            for (const auto& [key, item] : v.items())
                if (!plain_string(key) || !simple(item, depth - 1)) return false;
            return true;
        case json::value_t::array:
            if (depth == 0) return false;
            return std::all_of(v.begin(), v.end(),
                               [depth](const json& item) { return simple(item, depth - 1); });
        default:
            return false;
    }
}

void write_simple(std::string& out, const json& v) {
    char buf[24];
    switch (v.type()) {
        case json::value_t::null:
            out += "null";
            return;
        case json::value_t::boolean:
            out += v.get<bool>() ? "true" : "false";
            return;
        case json::value_t::number_integer:
            out.append(buf, std::to_chars(buf, buf + sizeof buf, v.get<std::int64_t>()).ptr);
            return;
        case json::value_t::number_unsigned:
            out.append(buf, std::to_chars(buf, buf + sizeof buf, v.get<std::uint64_t>()).ptr);
            return;
        case json::value_t::string:
            out += '"';
            out += v.get_ref<const std::string&>();
            out += '"';
            return;
        case json::value_t::object: {
            out += '{';
            bool first = true;
            for (const auto& [key, item] : v.items()) {
                if (!first) out += ',';
                first = false;
                out += '"';
                out += key;
                out += "\":";
                write_simple(out, item);
            }
            out += '}';
            return;
        }
        case json::value_t::array: {
            out += '[';
            bool first = true;
            for (const auto& item : v) {
                if (!first) out += ',';
                first = false;
                write_simple(out, item);
            }
            out += ']';
            return;
        }
        default:
            return;  // simple() let none of the others through
    }
}
}  // namespace

void append_json(std::string& out, const json& value) {
    // Small answers ({"entity": 7}, "pong", an error's data) are written directly: the serializer
    // json::dump() makes for each looks up the locale and zeroes 576 bytes of buffers, which was
    // a tenth of a ping's own cost. The rest is what dump() does, minus its temporary string.
    constexpr int simple_depth = 8;
    if (simple(value, simple_depth)) {
        write_simple(out, value);
        return;
    }
    nlohmann::detail::serializer<json> s(nlohmann::detail::output_adapter<char>(out), ' ',
                                         json::error_handler_t::replace);
    s.dump(value, false, false, 0);
}

namespace {

/// @brief append_json() of a request id, with the common ids (integers, plain strings) written
/// directly: the serializer it would make for each answer looks up the locale and zeroes a buffer.
void append_id(std::string& out, const json& id) {
    char buf[24];
    if (id.is_number_unsigned()) {
        out.append(buf, std::to_chars(buf, buf + sizeof buf, id.get<std::uint64_t>()).ptr);
        return;
    }
    if (id.is_number_integer()) {
        out.append(buf, std::to_chars(buf, buf + sizeof buf, id.get<std::int64_t>()).ptr);
        return;
    }
    if (id.is_string() && append_plain_string(out, id.get_ref<const std::string&>())) return;
    append_json(out, id);
}
}  // namespace

std::string make_response(const json& id, const json& result_or_error, bool is_error) {
    // Assembled as text: cheaper than building a json object around the result just to dump it.
    std::string out;
    out.reserve(128);
    out += R"({"jsonrpc":"2.0","id":)";
    append_id(out, id);
    out += is_error ? R"(,"error":)" : R"(,"result":)";
    append_json(out, result_or_error);
    out += '}';
    return out;
}

std::string make_result(const json& id, const json& result) {
    return make_response(id, result, false);
}

namespace {
// {"jsonrpc":"2.0","id":ID,"<member>":TEXT}: one allocation for the envelope, an id and the text.
std::string envelope_text(const json& id, std::string_view member, std::string_view text) {
    std::string out;
    out.reserve(64 + text.size());
    out += R"({"jsonrpc":"2.0","id":)";
    append_id(out, id);
    out += member;
    out += text;
    out += '}';
    return out;
}
}  // namespace

std::string make_result_text(const json& id, std::string_view result_text) {
    return envelope_text(id, R"(,"result":)", result_text);
}

std::string make_error_text(const json& id, std::string_view error_text) {
    return envelope_text(id, R"(,"error":)", error_text);
}

std::string error_text(reason why, std::string_view detail, const json& data) {
    std::string out;
    if (data.is_object() && !data.empty()) {
        append_json(out, error_object(why, detail, data));
        return out;
    }
    // Keys in json::dump()'s order: code, data, message.
    const auto& row = info(why);
    out.reserve(80 + detail.size());
    char code[16];
    out += R"({"code":)";
    out.append(code, std::to_chars(code, code + sizeof code, row.code).ptr);
    out += R"(,"data":{"reason":")";
    out += row.name;  // a plain identifier: nothing to escape
    out += R"("},"message":)";
    // Most messages have nothing to escape: written directly, as append_id does (the serializer
    // was two fifths of an error's own cost).
    const std::string_view text = detail.empty() ? std::string_view(row.message) : detail;
    if (!append_plain_string(out, text)) append_json(out, json(text));
    out += '}';
    return out;
}

std::string make_error(const json& id, reason why, std::string_view detail, const json& data) {
    return make_error_text(id, error_text(why, detail, data));
}

void begin_notification(std::string& out, std::string_view method) {
    out += R"({"jsonrpc":"2.0","method":")";
    out += method;
    out += R"(","params":)";
}

void begin_result(std::string& out, std::string_view id_json) {
    out += R"({"jsonrpc":"2.0","id":)";
    out += id_json;
    out += R"(,"result":)";
}

std::string make_request(const json& id, std::string_view method, const nlohmann::ordered_json& params) {
    nlohmann::ordered_json msg{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) msg["params"] = params;
    return msg.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string make_notification(std::string_view method, const nlohmann::ordered_json& params) {
    nlohmann::ordered_json msg{{"jsonrpc", "2.0"}, {"method", method}};
    if (!params.is_null()) msg["params"] = params;
    return msg.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace ecsd::protocol
