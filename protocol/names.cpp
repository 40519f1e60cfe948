#include "ecsd/protocol/names.hpp"

namespace ecsd::protocol {

std::optional<std::string> world_name_problem(std::string_view name) {
    if (name.empty()) return "a world name cannot be empty";
    if (name.size() > max_world_name)
        return "a world name has at most " + std::to_string(max_world_name) + " characters";
    if (name.front() == '.') return "a world name cannot start with '.'";
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '_' || c == '.' || c == '-';
        if (!ok) {
            const auto u = static_cast<unsigned char>(c);
            // Built by appending: GCC 12 at -O3 warns (-Wrestrict, a false positive) on the operator+ form.
            std::string text = "a world name uses only letters, digits, '_', '.' and '-' (found ";
            if (u < 0x20 || u >= 0x7f) {
                text.append("byte ").append(std::to_string(u));
            } else {
                text.append(1, '\'').append(1, c).append(1, '\'');
            }
            return text.append(")");
        }
    }
    return std::nullopt;
}

}  // namespace ecsd::protocol
