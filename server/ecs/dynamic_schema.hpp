#pragma once
// Components defined at run time (for example "vector2" with fields {x: 0, y: 0}):
// a name plus fields with types and defaults. Values are JSON objects that
// always hold every field, validated against the definition.

#include <string>
#include <string_view>
#include <vector>

#include "ecs/value_codec.hpp"

namespace ecsd::ecs {

enum class field_type { number, integer, boolean, string, entity, number_array };

[[nodiscard]] const char* to_string(field_type t) noexcept;

struct field_def {
    std::string name;
    field_type type;
    json default_value;
};

/// @brief The definition of one run-time component type.
class dynamic_schema {
  public:
    /// @brief Parses `{"x": 0, "hp": {"type": "integer", "default": 10}}`. A bare default
    /// infers number, bool, string or number[]; integer and entity need the long form.
    static dynamic_schema parse(std::string name, const json& fields);

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const std::vector<field_def>& fields() const noexcept { return fields_; }
    [[nodiscard]] bool is_tag() const noexcept { return fields_.empty(); }

    /// @brief A full value: defaults overlaid with `input`'s fields, each validated.
    [[nodiscard]] json make_value(const json& input, const json* base = nullptr) const;
    /// @brief Returns `value` with one field replaced, validated.
    [[nodiscard]] json with_field(const json& value, std::string_view field, const json& v) const;
    void hash(state_hasher& h, const json& value) const;
    [[nodiscard]] json to_json() const;

  private:
    [[nodiscard]] json validate_field(const field_def& f, const json& v) const;

    std::string name_;
    std::vector<field_def> fields_;
};

}  // namespace ecsd::ecs
