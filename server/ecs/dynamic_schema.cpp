#include "ecs/dynamic_schema.hpp"

namespace ecsd::ecs {

const char* to_string(field_type t) noexcept {
    switch (t) {
        case field_type::number:
            return "number";
        case field_type::integer:
            return "integer";
        case field_type::boolean:
            return "bool";
        case field_type::string:
            return "string";
        case field_type::entity:
            return "entity";
        case field_type::number_array:
            return "number[]";
    }
    return "?";
}

namespace {
field_type parse_type(const std::string& component, const std::string& field, const json& t) {
    if (t.is_string()) {
        const auto s = t.get<std::string>();
        if (s == "number") return field_type::number;
        if (s == "integer") return field_type::integer;
        if (s == "bool" || s == "boolean") return field_type::boolean;
        if (s == "string") return field_type::string;
        if (s == "entity") return field_type::entity;
        if (s == "number[]" || s == "array") return field_type::number_array;
    }
    throw ecs_error(reason::invalid_value, component + "." + field + ": unknown type " + t.dump() +
                                               " (number, integer, bool, string, entity, number[])");
}

field_type infer_type(const std::string& component, const std::string& field, const json& v) {
    if (v.is_number()) return field_type::number;
    if (v.is_boolean()) return field_type::boolean;
    if (v.is_string()) return field_type::string;
    if (v.is_array()) return field_type::number_array;
    throw ecs_error(reason::invalid_value, component + "." + field + ": cannot infer a type from " +
                                               v.dump() + "; use {\"type\": ..., \"default\": ...}");
}

json zero_of(field_type t) {
    switch (t) {
        case field_type::number:
            return 0.0;
        case field_type::integer:
            return 0;
        case field_type::boolean:
            return false;
        case field_type::string:
            return "";
        case field_type::entity:
            return 0;
        case field_type::number_array:
            return json::array();
    }
    return nullptr;
}
}  // namespace

dynamic_schema dynamic_schema::parse(std::string name, const json& fields) {
    dynamic_schema s;
    s.name_ = std::move(name);
    if (fields.is_null()) return s;
    if (!fields.is_object()) throw ecs_error(reason::invalid_value, s.name_ + ": fields must be an object");
    for (const auto& [key, spec] : fields.items()) {
        if (key.empty() || key.size() > 64)
            throw ecs_error(reason::invalid_value, s.name_ + ": field names are 1 to 64 characters");
        field_def f{key, field_type::number, nullptr};
        if (spec.is_object()) {
            // {type, default} describes the field; anything else in it is a mistake (an object
            // default such as {"y":1} is not a field type), not something to drop silently.
            for (const auto& [k, v] : spec.items()) {
                if (k != "type" && k != "default")
                    throw ecs_error(reason::invalid_value,
                                    s.name_ + "." + key +
                                        ": a field is a default value or {type, default}; '" + k +
                                        "' is neither (fields hold numbers, integers, booleans, strings, "
                                        "entities or arrays of numbers)");
            }
            f.type = parse_type(s.name_, key, spec.value("type", json("number")));
            f.default_value = zero_of(f.type);
            if (auto it = spec.find("default"); it != spec.end()) f.default_value = *it;
        } else {
            f.type = infer_type(s.name_, key, spec);
            f.default_value = spec;
        }
        f.default_value = s.validate_field(f, f.default_value);
        s.fields_.push_back(std::move(f));
    }
    return s;
}

json dynamic_schema::validate_field(const field_def& f, const json& v) const {
    const std::string where = name_ + "." + f.name;
    switch (f.type) {
        case field_type::number:
            return value_codec<double>::write(value_codec<double>::read(v, where));
        case field_type::integer:
            return value_codec<std::int64_t>::write(value_codec<std::int64_t>::read(v, where));
        case field_type::boolean:
            return value_codec<bool>::write(value_codec<bool>::read(v, where));
        case field_type::string:
            return value_codec<std::string>::write(value_codec<std::string>::read(v, where));
        case field_type::entity:
            return value_codec<entity_ref>::write(value_codec<entity_ref>::read(v, where));
        case field_type::number_array:
            return value_codec<std::vector<double>>::write(value_codec<std::vector<double>>::read(v, where));
    }
    return nullptr;
}

json dynamic_schema::make_value(const json& input, const json* base) const {
    // As for built-in components: an object ({} for the defaults); null is only for tags (an
    // older server took null as the defaults, so a saved world's null still loads).
    if (!input.is_object() && !(input.is_null() && internal::restoring()))
        internal::bad_value(name_, "an object ({} for the defaults)", input);
    json out = json::object();
    for (const auto& f : fields_) out[f.name] = base ? base->at(f.name) : f.default_value;
    if (input.is_null()) return out;
    for (const auto& [key, v] : input.items()) {
        const field_def* def = nullptr;
        for (const auto& f : fields_)
            if (f.name == key) def = &f;
        if (!def) throw ecs_error(reason::invalid_value, name_ + ": unknown field '" + key + "'");
        out[key] = validate_field(*def, v);
    }
    return out;
}

json dynamic_schema::with_field(const json& value, std::string_view field, const json& v) const {
    for (const auto& f : fields_) {
        if (f.name == field) {
            json out = value;
            out[f.name] = validate_field(f, v);
            return out;
        }
    }
    throw ecs_error(reason::invalid_value, name_ + ": unknown field '" + std::string(field) + "'");
}

void dynamic_schema::hash(state_hasher& h, const json& value) const {
    for (const auto& f : fields_) {
        const json& v = value.at(f.name);
        switch (f.type) {
            case field_type::number:
                h.add_double(v.get<double>());
                break;
            case field_type::integer:
            case field_type::entity:
                h.add_u64(v.get<std::uint64_t>());
                break;
            case field_type::boolean:
                h.add_u64(v.get<bool>() ? 1 : 0);
                break;
            case field_type::string:
                h.add_string(v.get_ref<const std::string&>());
                break;
            case field_type::number_array:
                h.add_u64(v.size());
                for (const auto& x : v) h.add_double(x.get<double>());
                break;
        }
    }
}

json dynamic_schema::to_json() const {
    json fields = json::array();
    for (const auto& f : fields_)
        fields.push_back({{"name", f.name}, {"type", ecs::to_string(f.type)}, {"default", f.default_value}});
    return fields;
}

}  // namespace ecsd::ecs
