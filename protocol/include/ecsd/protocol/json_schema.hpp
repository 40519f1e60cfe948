#pragma once
// A small JSON Schema validator, compiled once per schema so that checking a request's params
// costs a few comparisons. It covers the subset the method table uses:
//   type (name or list; "integer" means a JSON integer, 1.0 is refused), enum, const,
//   properties, required, additionalProperties (bool or schema), minProperties, maxProperties,
//   items, minItems, maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
//   minLength, maxLength (in code points), anyOf, oneOf.
// Annotations (title, description, default, examples, format, $comment, x-*) are ignored.
// Any other keyword is refused when compiling, so a typo in a schema fails at start-up.

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ecsd::protocol {

namespace internal {
struct schema_node;
}

/// @brief A compiled JSON Schema; copying shares the compiled form.
class json_schema {
  public:
    /// @brief Accepts everything (the schema `true` / `{}`).
    json_schema();
    /// @brief Compiles a schema; throws std::invalid_argument on an unsupported keyword.
    explicit json_schema(const nlohmann::json& schema);

    /// @brief nullopt when value conforms, else a message naming the first offending location,
    /// e.g. "params.ticks: expected integer". `root` names the value in messages.
    [[nodiscard]] std::optional<std::string> validate(const nlohmann::json& value,
                                                      std::string_view root = "params") const;

    /// @brief The schema text it was compiled from.
    [[nodiscard]] const nlohmann::json& source() const noexcept { return source_; }

  private:
    nlohmann::json source_;
    std::shared_ptr<const internal::schema_node> root_;
};

}  // namespace ecsd::protocol
