// Fuzz target for the framers and the JSON-RPC parser: arbitrary bytes, fed in arbitrary chunks,
// must never crash, hang, leak or trip a sanitizer, and every answer must be well formed. The same
// bytes are also read as a WebSocket client's frames (ws_framer): a message never passes its limit,
// a control frame's payload never passes 125 bytes, and nothing comes out after an error. Every
// line is also read twice, by protocol::parse_json (simdjson) and by json::parse: the two must
// agree on whether it is JSON and on every value and type, and parse_line, which reads requests
// from simdjson's DOM, must answer what parse_line_tree (nlohmann alone) answers.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "../support/same_json.hpp"
#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/framer.hpp"
#include "ecsd/protocol/ids.hpp"
#include "ecsd/protocol/json_parse.hpp"
#include "ecsd/protocol/json_schema.hpp"
#include "ecsd/protocol/jsonrpc.hpp"
#include "ecsd/protocol/ws_framer.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace p = ecsd::protocol;
    if (size == 0) return 0;
    // The first byte picks the chunk size, so split lines and CRLF across reads are covered.
    const std::size_t chunk = 1 + data[0] % 64;
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    static const p::json_schema schema(nlohmann::json{
        {"type", "object"},
        {"properties",
         {{"world", {{"type", "string"}, {"maxLength", 64}}}, {"entity", {{"type", "integer"}}}}}});

    p::ws_framer frames(512);
    bool ended = false;
    for (std::size_t pos = 0; pos < bytes.size() && !ended; pos += chunk) {
        frames.feed(bytes.substr(pos, chunk));
        for (;;) {
            const auto fr = frames.next();
            if (fr.status == p::ws_status::need_more) break;
            if (fr.status == p::ws_status::too_large || fr.status == p::ws_status::protocol_error) {
                check(fr.status == p::ws_status::too_large || fr.code >= 1000);
                check(frames.next().status == p::ws_status::need_more);  // nothing after the error
                ended = true;
                break;
            }
            if (fr.status == p::ws_status::text) {
                check(fr.payload.size() <= 512);
            } else {
                check(fr.payload.size() <= 125);
            }
        }
    }

    p::line_framer framer(512);
    for (std::size_t pos = 0; pos < bytes.size(); pos += chunk) {
        framer.feed(bytes.substr(pos, chunk));
        for (;;) {
            const auto fr = framer.next();
            if (fr.status == p::frame_status::too_large) return 0;  // the server closes here
            if (fr.status == p::frame_status::need_more) break;
            check(fr.line.size() <= 512);
            check(fr.line.find('\n') == std::string_view::npos);
            if (!p::exceeds_depth(fr.line))
                check(ecsd::test::same_json(p::parse_json(fr.line),
                                            nlohmann::json::parse(fr.line, nullptr, false)));
            const auto parsed = p::parse_line(fr.line);
            check(!parsed.messages.empty());
            check(ecsd::test::same_parsed_line(parsed, p::parse_line_tree(fr.line)));
            // get's params read typed where they have entity_read's shape: still the same messages.
            p::parse_limits typed;
            typed.entity_read_method = "world.get_components";
            const auto typed_parse = p::parse_line(fr.line, typed);
            check(ecsd::test::same_parsed_line(typed_parse, parsed));
            for (const auto& m : typed_parse.messages) {
                if (const auto* r = std::get_if<p::request>(&m); r != nullptr && r->read) {
                    check(r->method == typed.entity_read_method);
                    check(r->read->entity <= p::max_entity_id);
                }
            }
            for (const auto& m : parsed.messages) {
                if (const auto* r = std::get_if<p::request>(&m)) {
                    (void)schema.validate(r->params);
                    check(nlohmann::json::parse(p::make_result(r->id, r->params)).is_object());
                } else {
                    const auto& b = std::get<p::bad_message>(m);
                    const auto line = p::make_error(b.id, b.why, b.detail, b.data);
                    check(nlohmann::json::parse(line)["error"]["data"]["reason"] == p::name(b.why));
                }
            }
        }
    }
    return 0;
}
