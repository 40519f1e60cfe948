#pragma once
// Writes JSON text straight onto a string, for hot read paths (world.get_components) that would
// otherwise build a json tree only to serialise it: each object node and key is an allocation.
// Scalars go through nlohmann's own serializer, so numbers read exactly as json::dump() writes
// them; callers write object keys in sorted order, as json::dump() does for std::map objects.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ecsd::ecs {

class json_text {
  public:
    explicit json_text(std::string& out)
        : out_(out),
          serializer_(nlohmann::detail::output_adapter<char>(out), ' ',
                      nlohmann::json::error_handler_t::replace) {}

    /// @brief Appends text that is already JSON (punctuation, literals).
    void raw(std::string_view text) { out_.append(text); }
    /// @brief Appends any JSON value.
    void value(const nlohmann::json& v) { serializer_.dump(v, false, false, 0); }
    /// @brief Appends "k": with k escaped.
    void key(std::string_view k) {
        string(k);
        out_ += ':';
    }
    /// @brief Appends a JSON string.
    void string(std::string_view s) {
        if (plain(s)) {
            out_ += '"';
            out_.append(s);
            out_ += '"';
        } else {
            value(nlohmann::json(std::string(s)));  // rare: let the serializer escape it
        }
    }

  private:
    static bool plain(std::string_view s) noexcept {
        for (const char c : s) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') return false;
        }
        return true;
    }

    std::string& out_;
    nlohmann::detail::serializer<nlohmann::json> serializer_;
};

}  // namespace ecsd::ecs
