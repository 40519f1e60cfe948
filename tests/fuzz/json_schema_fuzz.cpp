// Fuzz target for the JSON-schema validator (protocol::json_schema) and the run-time component
// schema (ecs::dynamic_schema), over JSON texts as they reach them: nesting past the protocol's
// limit and NUL bytes are refused on the raw text first, as the server does (protocol::parse_line).
//   - one JSON text: it round-trips through dump/parse; it is validated against a fixed schema using
//     every keyword; compiled as a schema (or refused with invalid_argument), it validates itself
//     and a few fixed values; parsed as a component's fields (or refused with ecs_error), its
//     defaults make a value, and the definition re-parsed from to_json() is the same.
//   - otherwise, "SCHEMA\nVALUE": the value checked against the compiled schema and, as fields, made
//     into a component value.
// The seeds include JSONTestSuite-style texts (y_ valid, n_ invalid, i_ implementation-defined).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ecs/dynamic_schema.hpp"
#include "ecs/error.hpp"
#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/json_schema.hpp"

namespace {

using nlohmann::json;
namespace p = ecsd::protocol;
namespace ecs = ecsd::ecs;

void check(bool ok) {
    if (!ok) std::abort();
}

std::size_t depth_of(const json& v) {
    if (!v.is_structured()) return 0;
    std::size_t deepest = 0;
    for (const auto& e : v) deepest = std::max(deepest, depth_of(e));
    return deepest + 1;
}

const p::json_schema& every_keyword() {
    static const p::json_schema schema(json::parse(R"({
        "type": ["object", "array", "string", "number", "null", "boolean"],
        "properties": {
            "id": {"type": "integer", "minimum": 0, "maximum": 1e15},
            "name": {"type": "string", "minLength": 1, "maxLength": 8},
            "ratio": {"type": "number", "exclusiveMinimum": -1, "exclusiveMaximum": 1.5},
            "mode": {"enum": ["a", 1, null, [1], {"b": 2}]},
            "fixed": {"const": {"k": [true, false]}},
            "list": {"type": "array", "items": {"oneOf": [{"type": "integer"}, {"type": "number", "maximum": 0}]},
                     "minItems": 1, "maxItems": 4},
            "nested": {"type": "object", "additionalProperties": {"anyOf": [{"type": "string"}, {"const": 7}]},
                       "minProperties": 1, "maxProperties": 3, "required": ["x"]},
            "closed": {"additionalProperties": false, "properties": {"only": true}},
            "never": false
        },
        "required": ["id"],
        "title": "every keyword", "x-note": "annotations are ignored"
    })"));
    return schema;
}

void exercise_fields(const json& fields, const json* value) {
    ecs::dynamic_schema s;
    try {
        s = ecs::dynamic_schema::parse("T", fields);
    } catch (const ecs::ecs_error& e) {
        check(e.why() == ecs::reason::invalid_value);
        return;
    }
    const json defaults = s.make_value(json::object());
    check(defaults.is_object() && defaults.size() == s.fields().size());
    ecs::state_hasher h;
    s.hash(h, defaults);
    // The definition as rpc.discover shows it describes the same component.
    json again = json::object();
    for (const auto& f : s.to_json())
        again[f["name"].get<std::string>()] = {{"type", f["type"]}, {"default", f["default"]}};
    check(ecs::dynamic_schema::parse("T", again).to_json() == s.to_json());
    if (!value) return;
    try {
        const json made = s.make_value(*value);
        s.hash(h, made);
        for (const auto& f : s.fields()) (void)s.with_field(made, f.name, *value);
    } catch (const ecs::ecs_error& e) {
        check(e.why() == ecs::reason::invalid_value);
    }
}

void exercise_schema(const json& schema, const json& value) {
    std::optional<p::json_schema> compiled;
    try {
        compiled.emplace(schema);
    } catch (const std::invalid_argument&) {
        return;
    } catch (const json::exception&) {  // e.g. "required": [1]; schemas are the server's own
        return;
    }
    if (const auto why = compiled->validate(value)) check(why->starts_with("params"));
    (void)compiled->validate(schema, "schema");
    for (const auto& v :
         {json(nullptr), json(0), json(-1.5), json("text"), json::array({1, "a"}), json::object()})
        (void)compiled->validate(v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // nlohmann::json stops at a NUL byte and takes what came before it: the server refuses any.
    const bool nul = text.find('\0') != std::string_view::npos;
    if (p::exceeds_depth(text)) {
        // The server refuses it unparsed; when it is JSON at all, it is indeed too deep.
        const json doc = json::parse(text, nullptr, false);
        if (!nul && !doc.is_discarded()) check(depth_of(doc) > p::max_nesting_depth);
        return 0;
    }
    if (nul) return 0;
    const json doc = json::parse(text, nullptr, false);
    if (!doc.is_discarded()) {
        check(depth_of(doc) <= p::max_nesting_depth);
        check(json::parse(doc.dump()) == doc);
        check(json::parse(doc.dump(-1, ' ', true)) == doc);
        if (const auto why = every_keyword().validate(doc)) check(why->starts_with("params"));
        exercise_schema(doc, doc);
        exercise_fields(doc, &doc);
        return 0;
    }
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) return 0;
    const json schema = json::parse(text.substr(0, nl), nullptr, false);
    const json value = json::parse(text.substr(nl + 1), nullptr, false);
    if (schema.is_discarded() || value.is_discarded()) return 0;
    exercise_schema(schema, value);
    exercise_fields(schema, &value);
    return 0;
}
