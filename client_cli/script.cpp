#include "script.hpp"

#include <istream>
#include <string>
#include <vector>

#include "line_parser.hpp"

namespace ecsd::cli {

namespace {

/// @brief One line of a script with its number, for `NAME:LINE:` in messages.
struct script_line {
    std::size_t number;
    std::string text;
};

/// @brief How a line shapes blocks: `repeat N {` opens one, a lone `}` closes one.
enum class block_role { none, opens, closes };

block_role role_of(const std::string& text) {
    try {
        const auto parsed = parse_line(text);
        const auto& w = parsed.words;
        if (!parsed.assign_to && w.size() == 1 && w[0] == "}") return block_role::closes;
        if (!parsed.assign_to && w.size() == 3 && w[0] == "repeat" && w[2] == "{") return block_role::opens;
    } catch (const usage_error&) {
        // a malformed line is no block marker: running it reports the mistake
    }
    return block_role::none;
}

class script_runner {
  public:
    script_runner(session& s, std::string_view name, bool keep_going)
        : s_(s), name_(name), keep_going_(keep_going) {}

    /// @brief Runs lines [begin, end) of `lines`; false when the script must stop (failure or exit).
    bool run(const std::vector<script_line>& lines, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
            if (role_of(lines[i].text) == block_role::opens) {
                const std::size_t close = matching_close(lines, i, end);
                if (close == end) {
                    return fail(lines[i], exit_code::usage, "repeat block without its closing } line");
                }
                if (!run_block(lines, i, close)) return false;
                i = close;
                continue;
            }
            if (role_of(lines[i].text) == block_role::closes) {
                if (!fail(lines[i], exit_code::usage, "} without a repeat N { before it")) return false;
                continue;
            }
            line_effect effect = line_effect::none;
            const auto code = run_line(s_, lines[i].text, where(lines[i]), /*interactive=*/false, &effect);
            if (code != exit_code::ok && !note(code)) return false;
            if (effect == line_effect::quit) return false;
        }
        return true;
    }

    [[nodiscard]] exit_code first_failure() const noexcept { return first_failure_; }

    /// @brief Index of the `}` closing the block opened at `open`, or `end` when there is none.
    static std::size_t matching_close(const std::vector<script_line>& lines, std::size_t open,
                                      std::size_t end) {
        int depth = 0;
        for (std::size_t i = open; i < end; ++i) {
            const auto r = role_of(lines[i].text);
            if (r == block_role::opens) ++depth;
            if (r == block_role::closes && --depth == 0) return i;
        }
        return end;
    }

  private:
    bool run_block(const std::vector<script_line>& lines, std::size_t open, std::size_t close) {
        std::uint64_t count = 0;
        const auto code = guarded(s_, where(lines[open]),
                                  [&] { count = repeat_count(parse_line(lines[open].text).words, s_.vars); });
        if (code != exit_code::ok) return note(code);
        for (std::uint64_t i = 0; i < count; ++i) {
            s_.vars["i"] = i;
            if (!run(lines, open + 1, close)) return false;
        }
        return true;
    }

    std::string where(const script_line& line) const { return name_ + ":" + std::to_string(line.number); }

    bool fail(const script_line& line, exit_code code, const std::string& message) {
        *s_.err << where(line) << ": " << message << '\n';
        return note(code);
    }

    /// @brief Records a failing line; true when the script goes on (--keep-going).
    bool note(exit_code code) {
        if (first_failure_ == exit_code::ok) first_failure_ = code;
        return keep_going_;
    }

    session& s_;
    std::string name_;
    bool keep_going_;
    exit_code first_failure_ = exit_code::ok;
};

}  // namespace

exit_code run_script(session& s, std::istream& in, std::string_view name, bool keep_going) {
    script_runner runner(s, name, keep_going);
    // Lines run as they arrive (a script on a pipe may be written as it goes); a repeat block is
    // read to its closing line first, then run.
    std::vector<script_line> pending;
    std::size_t number = 0;
    int depth = 0;
    for (std::string line; std::getline(in, line);) {
        pending.push_back({++number, line});
        const auto r = role_of(line);
        if (r == block_role::opens) ++depth;
        if (r == block_role::closes && depth > 0) --depth;
        if (depth > 0) continue;
        const bool go_on = runner.run(pending, 0, pending.size());
        pending.clear();
        if (!go_on) return runner.first_failure();
    }
    if (!pending.empty()) runner.run(pending, 0, pending.size());  // an unclosed block: reported there
    return runner.first_failure();
}

}  // namespace ecsd::cli
