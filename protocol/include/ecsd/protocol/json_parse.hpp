#pragma once
// JSON text to nlohmann::json, read by simdjson. The server builds the same trees as before (every
// handler, schema and journal works on nlohmann::json); only the reading is faster.

#include <simdjson.h>

#include <string_view>

#include <nlohmann/json.hpp>

namespace ecsd::protocol {

/// @brief What `json::parse(text, nullptr, false)` returns, value for value and type for type:
/// non-negative integers unsigned, a repeated key's last value kept, a discarded value where the
/// text is not JSON. simdjson reads the text; whatever it refuses or might read differently (a
/// `\u` escape, an integer `-0`, a number past 64 bits, a text over 1 MiB) goes to nlohmann's
/// parser, so the two never disagree. A text nested deeper than max_document_depth is discarded
/// too, unread. Never throws on bad input.
[[nodiscard]] nlohmann::json parse_json(std::string_view text);

/// @brief A large document (a snapshot, an import) as `json::parse(text, nullptr, false)` reads
/// it, or a discarded value where it is not JSON or nests deeper than max_document_depth.
[[nodiscard]] nlohmann::json parse_document(std::string_view text);

/// @brief simdjson's DOM of `text`, read by this thread's parser: valid until the thread's next
/// call. False where simdjson refuses the text, where it is over 1 MiB, or where simdjson might read
/// a value otherwise than nlohmann (a `\u` escape; an integer `-0`, which nlohmann reads as signed):
/// then the caller asks nlohmann. parse_json and the journal's record check both read through it.
[[nodiscard]] bool read_dom(std::string_view text, simdjson::dom::element& root);
/// @brief Ends the DOM read_dom() gave this thread: when it read a text over 64 KiB, the parser's
/// buffers go back to the allocator (a batch's megabytes would otherwise stay resident, per
/// thread). Call it once done with the DOM.
void release_large_dom() noexcept;

/// @brief `out` as nlohmann's parser builds it from the text that read_dom() read as `e` (one
/// element of the DOM: a request's params without the envelope around them).
void build(simdjson::dom::element e, nlohmann::json& out);

}  // namespace ecsd::protocol
