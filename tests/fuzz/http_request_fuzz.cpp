// Fuzz target for the HTTP face's request parser (net::request_parser, over Debian's http-parser),
// driven as http_connection::parse drives it: bytes arrive in chunks, each complete message is
// answered before the next is parsed, an error or a message without keep-alive ends the
// connection; a message's head is reported before its body. Nothing may crash, hang (a message
// completing without consuming a byte would spin the server) or pass the limits: 16 KiB of request
// line and headers, the body limit.
// The first byte picks the chunk size (bits 0-5) and the body limit (bit 6: 64 bytes, else 1 MiB,
// the default --max-line-bytes).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/request_parser.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using ecsd::net::request_parser;
    if (size == 0) return 0;
    const std::size_t chunk = 1 + (data[0] & 0x3f);
    const std::size_t max_body = (data[0] & 0x40) != 0 ? 64 : 1024 * 1024;
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

    request_parser parser(max_body);
    std::string in;  // read and not yet parsed, as http_connection's in_
    bool open = false;
    for (std::size_t pos = 0; pos < bytes.size(); pos += chunk) {
        in.append(bytes.substr(pos, chunk));
        while (!in.empty()) {
            const auto step = parser.execute(in);
            check(step.consumed <= in.size());
            if (step.began) open = true;
            if (step.error != 0) {
                check(step.error == 400 || step.error == 413 || step.error == 431);
                check(!step.complete && !step.why.empty());
                return 0;  // answered, then closed
            }
            in.erase(0, step.consumed);
            if (step.head) {  // the headers are in (the caller judges them here); on with the body
                check(open && !step.complete);
                check(parser.host().size() <= request_parser::max_header_bytes);
                continue;
            }
            if (!step.complete) {
                check(in.empty());  // everything was taken; the rest of the message is still to come
                break;
            }
            check(open && step.consumed > 0);
            open = false;
            check(parser.url().size() <= request_parser::max_header_bytes);
            check(parser.authorization().size() <= request_parser::max_header_bytes);
            check(parser.body().size() <= max_body);
            const auto method = parser.method();
            (void)http_method_str(method);
            if (!parser.keep_alive()) return 0;  // closed after the answer
        }
    }
    return 0;
}
