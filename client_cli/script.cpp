#include "script.hpp"

#include <istream>
#include <string>

namespace ecsd::cli {

exit_code run_script(session& s, std::istream& in, std::string_view name, bool keep_going) {
    exit_code first_failure = exit_code::ok;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        const std::string where = std::string(name) + ":" + std::to_string(number);
        line_effect effect = line_effect::none;
        const auto code = run_line(s, line, where, /*interactive=*/false, &effect);
        if (code != exit_code::ok) {
            if (first_failure == exit_code::ok) {
                first_failure = code;
            }
            if (!keep_going) {
                break;
            }
        }
        if (effect == line_effect::quit) {
            break;
        }
    }
    return first_failure;
}

}  // namespace ecsd::cli
