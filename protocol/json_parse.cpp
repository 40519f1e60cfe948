#include "ecsd/protocol/json_parse.hpp"

#include <string>

#include "ecsd/protocol/depth.hpp"

namespace ecsd::protocol {
namespace {

using nlohmann::json;

// Larger texts (a snapshot's head, an import) are read by nlohmann: simdjson's parser keeps its
// buffers at the size of the largest document it read, per thread, for good.
constexpr std::size_t largest = std::size_t{1} << 20U;
// Up to this much text, the parser keeps its buffers between documents (requests are smaller); a
// larger one's (a spawn batch of 10,000 entities: about 6 MB of simdjson's buffers per thread) go
// back at release_large_dom(), or they would stay resident for good.
constexpr std::size_t kept = std::size_t{64} << 10U;

thread_local simdjson::dom::parser parser;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
thread_local std::string padded;            // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

}  // namespace

void build(simdjson::dom::element e, json& out) {
    switch (e.type()) {
        case simdjson::dom::element_type::OBJECT: {
            out = json::object();
            auto& members = out.get_ref<json::object_t&>();
            for (const auto field : simdjson::dom::object(e)) {
                // operator[]: a repeated key keeps its last value, as nlohmann's parser does.
                build(field.value, members[std::string(field.key)]);
            }
            return;
        }
        case simdjson::dom::element_type::ARRAY: {
            const auto items = simdjson::dom::array(e);
            out = json::array();
            auto& values = out.get_ref<json::array_t&>();
            values.reserve(items.size());
            for (const auto item : items) {
                build(item, values.emplace_back());
            }
            return;
        }
        case simdjson::dom::element_type::STRING:
            out = std::string(std::string_view(e));
            return;
        case simdjson::dom::element_type::INT64: {
            const auto v = std::int64_t(e);
            // nlohmann reads every integer without a minus sign as unsigned.
            if (v >= 0) {
                out = static_cast<std::uint64_t>(v);
            } else {
                out = v;
            }
            return;
        }
        case simdjson::dom::element_type::UINT64:
            out = std::uint64_t(e);
            return;
        case simdjson::dom::element_type::DOUBLE:
            out = double(e);
            return;
        case simdjson::dom::element_type::BOOL:
            out = bool(e);
            return;
        case simdjson::dom::element_type::NULL_VALUE:
            out = nullptr;
            return;
    }
}

namespace {
/// @brief False where simdjson, if it accepts `text`, might read a value otherwise than nlohmann.
bool simdjson_reads_as_nlohmann(std::string_view text) noexcept {
    // \u escapes: the libraries' handling of lone surrogates differs between versions.
    if (text.find("\\u") != std::string_view::npos) return false;
    // simdjson reads an integer -0 as the integer 0, nlohmann as a signed integer (-0.0 and -0.5
    // are doubles to both). A "-0" inside a string counts too: rare, and then nlohmann reads it.
    for (auto at = text.find("-0"); at != std::string_view::npos; at = text.find("-0", at + 2)) {
        const char next = at + 2 < text.size() ? text[at + 2] : ' ';
        if (next != '.' && next != 'e' && next != 'E') return false;
    }
    return true;
}
}  // namespace

bool read_dom(std::string_view text, simdjson::dom::element& root) {
    if (text.size() > largest || !simdjson_reads_as_nlohmann(text)) return false;
    padded.resize(text.size() + simdjson::SIMDJSON_PADDING);  // shrunk by release_large_dom()
    text.copy(padded.data(), text.size());
    return parser.parse(padded.data(), text.size(), false).get(root) == simdjson::SUCCESS;
}

void release_large_dom() noexcept {
    if (padded.capacity() <= kept + simdjson::SIMDJSON_PADDING) return;
    parser = simdjson::dom::parser{};
    std::string().swap(padded);
}

json parse_json(std::string_view text) {
    if (exceeds_depth(text, max_document_depth)) return json(json::value_t::discarded);
    simdjson::dom::element root;
    if (read_dom(text, root)) {
        json out;
        build(root, out);
        release_large_dom();
        return out;
    }
    return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

json parse_document(std::string_view text) {
    if (exceeds_depth(text, max_document_depth)) return json(json::value_t::discarded);
    return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace ecsd::protocol
