#pragma once
// JSON-RPC 2.0 messages: turning one framed line into requests (single or batch) and building
// response lines. Pure functions; the server and ecsctl share them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/errors.hpp"

namespace ecsd::protocol {

/// @brief The params of a read of one entity by id, `{"entity": 7, "world"?: "w", "components"?:
/// ["Position"]}`, read straight from the parser for the method parse_limits::entity_read_method
/// names: the server answers its hottest read without a tree for the params, the schema's walk over
/// it or the tree's destruction (together more than a quarter of a get's trip through the pipeline).
/// Only params of exactly this shape are read so, each member within the bounds the method's schema
/// sets (the id an integer of at most 53 bits, a name at most 64 bytes, at most 1024 names); any
/// other params, valid or not, become a tree as for every method, so no answer depends on which way
/// they were read (tests/unit/net/typed_read_test.cpp holds the schema to these bounds).
struct entity_read {
    std::uint64_t entity = 0;
    std::optional<std::string> world;
    std::optional<std::vector<std::string>> components;

    static constexpr std::size_t max_name_bytes = 64;
    static constexpr std::size_t max_names = 1024;
};

/// @brief The params tree an entity_read stands for: what the parser would have built.
[[nodiscard]] nlohmann::json to_params(const entity_read& read);

/// @brief A valid request or notification.
struct request {
    nlohmann::json id;          ///< string, number or null; meaningless for notifications
    bool notification = false;  ///< true when the message had no "id" member: no response
    std::string method;
    nlohmann::json params;            ///< object, array, or null when absent (null when `read` is set)
    std::optional<entity_read> read;  ///< the params, when the parser read them as an entity_read
};

/// @brief A message that must be answered with an error instead of being dispatched.
struct bad_message {
    nlohmann::json id;  ///< the request's id when it could be read, else null
    reason why;
    std::string detail;
    nlohmann::json data = nullptr;  ///< extra members for error.data
};

/// @brief One element of a parsed line.
using message = std::variant<request, bad_message>;

/// @brief A parsed line: one message, or the elements of a batch.
struct parsed_line {
    bool batch = false;  ///< true for a non-empty array: the answer is an array too
    std::vector<message> messages;
};

/// @brief Limits applied while parsing.
struct parse_limits {
    std::size_t max_depth = max_nesting_depth;
    std::size_t max_batch = 1024;  ///< more elements than this: one invalid_request error
    /// A method whose params, when they have entity_read's shape, are read into request::read
    /// instead of a tree (empty: none). The server names world.get_components.
    std::string_view entity_read_method;
};

/// @brief Parses and validates one line. Never throws for bad input: every failure becomes a
/// bad_message that the caller answers (parse_error and empty batches answer with id null).
[[nodiscard]] parsed_line parse_line(std::string_view line, const parse_limits& limits = {});
/// @brief What parse_line answers, read by nlohmann's parser alone into a tree for the whole line:
/// parse_line's way when simdjson cannot read the line, and the reference the tests and the
/// framer_parser fuzz target hold parse_line to.
[[nodiscard]] parsed_line parse_line_tree(std::string_view line, const parse_limits& limits = {});

/// @brief Why `line` is not JSON, in plain words for an error message: "invalid JSON at byte 17:
/// unexpected '}'" (or "...: unexpected end of input"); never the JSON library's own text.
[[nodiscard]] std::string invalid_json_text(std::string_view line);

/// @brief Validates an already parsed JSON value as one request (consumes it).
[[nodiscard]] message to_message(nlohmann::json&& value);

/// @brief The text of a success response, without the trailing newline.
[[nodiscard]] std::string make_result(const nlohmann::json& id, const nlohmann::json& result);
/// @brief A success response around a result that is already JSON text (written by a hot path).
[[nodiscard]] std::string make_result_text(const nlohmann::json& id, std::string_view result_text);

/// @brief The text of an error response, without the trailing newline. error.message is
/// `detail` (or the reason's default message when empty); error.data is {reason, ...data}.
[[nodiscard]] std::string make_error(const nlohmann::json& id, reason why, std::string_view detail = {},
                                     const nlohmann::json& data = nullptr);

/// @brief An error response around an error object that is already JSON text (error_text()).
[[nodiscard]] std::string make_error_text(const nlohmann::json& id, std::string_view error_text);

/// @brief The error object as JSON text: the same text as error_object(...).dump(), written
/// without building the object when there is no extra data (the cheap path for common errors).
[[nodiscard]] std::string error_text(reason why, std::string_view detail = {},
                                     const nlohmann::json& data = nullptr);

/// @brief The error object {code, message, data} alone, for callers that assemble responses.
[[nodiscard]] nlohmann::json error_object(reason why, std::string_view detail = {},
                                          const nlohmann::json& data = nullptr);

/// @brief The envelopes of lines written as text on hot paths (watch notifications, BRP
/// streams): appends `{"jsonrpc":"2.0","method":"METHOD","params":`; the caller appends the params
/// object and one closing `}`. `method` is a method name: nothing in it needs escaping.
void begin_notification(std::string& out, std::string_view method);
/// @brief As begin_notification, for a response: appends `{"jsonrpc":"2.0","id":ID,"result":`
/// with `id_json` the id as JSON text; the caller appends the result and one closing `}`.
void begin_result(std::string& out, std::string_view id_json);

/// @brief Appends the compact JSON text of `value` to `out` (invalid UTF-8 replaced, never throws for it).
void append_json(std::string& out, const nlohmann::json& value);

/// @brief A complete response from an id and either a result or an error object.
[[nodiscard]] std::string make_response(const nlohmann::json& id, const nlohmann::json& result_or_error,
                                        bool is_error);

/// @brief The text of a request line, without the newline: {"jsonrpc":"2.0","id":..,"method":..,"params":..},
/// params omitted when null and written in their own member order (an ordered_json keeps its
/// writer's; a json converts in name order). Invalid UTF-8 is replaced, never thrown. The one request
/// builder of ecsctl, the tests and the benchmarks.
[[nodiscard]] std::string make_request(const nlohmann::json& id, std::string_view method,
                                       const nlohmann::ordered_json& params = nullptr);

/// @brief The text of a notification line (no id, so no response), without the newline; as make_request.
[[nodiscard]] std::string make_notification(std::string_view method,
                                            const nlohmann::ordered_json& params = nullptr);

}  // namespace ecsd::protocol
