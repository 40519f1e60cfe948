#include "shell.hpp"

// readline's headers need stdio first.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <span>

#include <readline/history.h>
#include <readline/readline.h>

#include "ecsd/protocol/version.hpp"
#include "line_parser.hpp"
#include "verb_parser.hpp"

namespace ecsd::cli {

namespace {

constexpr std::array<std::string_view, 10> local_commands = {"help",   "use",    "vars",  "echo", "expect",
                                                             "assert", "repeat", "sleep", "exit", "quit"};

/// @brief Where a component name starts inside query text (`'Position, !Frozen, ?Health, near(...)`);
///        `"` and `[` also cover the JSON form (`'{"all":["Pos`).
constexpr std::string_view query_separators = "'\",!?|([";

/// @brief How long the shell keeps a listing before asking the server again.
constexpr auto listing_max_age = std::chrono::seconds(2);

/// @brief The shell's completion source, for readline's C callbacks.
completion_source* active_source = nullptr;

/// @brief Candidates of the completion in progress, handed out one by one to readline.
std::vector<std::string> pending;

char* next_candidate(const char* /*text*/, int state) {
    static std::size_t index = 0;
    if (state == 0) {
        index = 0;
    }
    if (index >= pending.size()) {
        return nullptr;
    }
    return strdup(pending[index++].c_str());  // readline frees it
}

char** attempt_completion(const char* text, int /*start*/, int end) {
    rl_attempted_completion_over = 1;  // never fall back to file names
    auto found =
        complete_line(std::string_view(rl_line_buffer, static_cast<std::size_t>(end)), active_source);
    if (!found.append_space) {
        rl_completion_suppress_append = 1;  // readline resets it before every completion
    }
    pending = std::move(found.candidates);
    return rl_completion_matches(text, next_candidate);
}

std::string history_path() {
    if (const char* path = std::getenv("ECSCTL_HISTORY"); path != nullptr && *path != '\0') {
        return path;
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        return std::string(home) + "/.ecsctl_history";
    }
    return {};
}

void add_unique(std::vector<std::string>& out, std::string_view name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) {
        out.emplace_back(name);
    }
}

/// @brief The word being completed and what comes before it.
struct word_context {
    std::vector<std::string> before;  ///< complete words before the argument being typed
    std::string argument;             ///< the argument typed so far, quotes removed (it may hold blanks)
    std::string_view text;            ///< the part of it after the last blank: what the candidates replace
    bool open_quote = false;          ///< the argument is inside a quote not yet closed
};

/// @brief True when split_words cannot read `text` (an open quote, mostly).
bool unreadable(std::string_view text) {
    try {
        (void)split_words(text);
        return false;
    } catch (const std::exception&) {
        return true;
    }
}

/// @brief Splits the line up to the cursor; nullopt when it cannot be read (a stray backslash).
std::optional<word_context> context_of(std::string_view line) {
    const auto blank = line.find_last_of(" \t\n");
    word_context c;
    c.text = blank == std::string_view::npos ? line : line.substr(blank + 1);
    c.open_quote = unreadable(line);
    const std::string head(line.substr(0, line.size() - c.text.size()));
    if (!unreadable(head)) {
        c.before = split_words(head);
        c.argument = std::string(c.text);
        return c;
    }
    // A quote opened before the last blank ('Position, Vel): close it to find where the argument starts.
    for (const char quote : {'\'', '"'}) {
        if (const std::string closed = head + quote; !unreadable(closed)) {
            c.before = split_words(closed);
            if (c.before.empty()) {
                return std::nullopt;
            }
            c.argument = c.before.back() + std::string(c.text);
            c.before.pop_back();
            return c;
        }
    }
    return std::nullopt;
}

/// @brief `prefix` + each name that starts with `partial`.
std::vector<std::string> matching(const std::vector<std::string>& names, std::string_view prefix,
                                  std::string_view partial) {
    std::vector<std::string> out;
    for (const auto& name : names) {
        if (name.starts_with(partial)) {
            out.push_back(std::string(prefix) + name);
        }
    }
    return out;
}

/// @brief Names completed after the last of `separators` in `text` (`Position,Vel` -> `Position,Velocity`).
std::vector<std::string> matching_after(const std::vector<std::string>& names, std::string_view text,
                                        std::string_view separators) {
    const auto cut = text.find_last_of(separators);
    const auto start = cut == std::string_view::npos ? 0 : cut + 1;
    return matching(names, text.substr(0, start), text.substr(start));
}

/// @brief The names of `kind` from the source, or none without one.
std::vector<std::string> server_names(completion_source* source, std::string_view kind) {
    return source == nullptr || kind.empty() ? std::vector<std::string>{} : source->names(kind);
}

/// @brief The option of `v` called `name`, or nullptr.
const option_spec* option_of(const verb& v, std::string_view name) {
    const auto it = std::find_if(v.options.begin(), v.options.end(),
                                 [&](const option_spec& o) { return o.name == name; });
    return it == v.options.end() ? nullptr : &*it;
}

/// @brief The positional argument of `v` that the word after `words` (the verb's words so far, options
///        and their values included) fills, or nullptr when there is none.
const positional_spec* positional_after(const verb& v, std::span<const std::string> words) {
    std::size_t index = 0;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (const auto* o = option_of(v, words[i]); o != nullptr) {
            i += o->is_flag ? 0 : 1;  // skip its value
        } else {
            ++index;
        }
    }
    for (const auto& arg : v.args) {
        if (arg.count == arity::many || arg.count == arity::any) {
            return &arg;  // takes every word that is left
        }
        if (index == 0) {
            return &arg;
        }
        --index;
    }
    return nullptr;
}

/// @brief Candidates for an argument or option value of kind `kind`, names from the list `list`.
completion complete_value(word_kind kind, std::string_view list, const word_context& c,
                          completion_source* source) {
    switch (kind) {
        case word_kind::none:
            return {};
        case word_kind::name:
            return {matching(server_names(source, list), "", c.text)};
        case word_kind::name_list:
            return {matching_after(server_names(source, list), c.text, ",")};
        case word_kind::name_value:
            if (c.argument.find('=') != std::string::npos) {
                return {};  // the JSON after `=`
            }
            return {matching(server_names(source, list), "", c.text), /*append_space=*/false};
        case word_kind::query:
            if (!c.open_quote && c.text.find_first_of("'\"") != std::string_view::npos) {
                return {};  // after the closing quote
            }
            return {matching_after(server_names(source, list), c.text, query_separators), !c.open_quote};
    }
    return {};
}

/// @brief Candidates for the word of `c` after the words of a verb.
completion complete_verb_word(const verb& v, std::span<const std::string> words, const word_context& c,
                              completion_source* source) {
    if (c.text.starts_with('-') && !c.open_quote) {
        std::vector<std::string> names{"--help"};
        for (const auto& o : v.options) {
            names.emplace_back(o.name);
        }
        return {matching(names, "", c.text)};
    }
    if (!words.empty()) {
        if (const auto* o = option_of(v, words.back()); o != nullptr && !o->is_flag) {
            return complete_value(o->completion, v.completes, c, source);
        }
    }
    const auto* arg = positional_after(v, words);
    if (arg == nullptr) {
        return {};
    }
    return complete_value(arg->completion, arg->list.empty() ? v.completes : arg->list, c, source);
}

/// @brief Candidates for the word of `c`, given the words before it.
completion complete_in(word_context c, completion_source* source) {
    auto& before = c.before;
    // `$x = VERB ...` and `repeat N VERB ...` complete like the VERB.
    while (before.size() >= 2 &&
           ((before[0].starts_with('$') && before[1] == "=") || before[0] == "repeat")) {
        before.erase(before.begin(), before.begin() + 2);
    }
    const auto& table = verbs();
    std::vector<std::string> names;
    if (before.empty() || (before.size() == 1 && before[0] == "help")) {
        for (const auto& v : table) {
            add_unique(names, v.name.substr(0, v.name.find(' ')));
        }
        if (before.empty()) {
            names.insert(names.end(), local_commands.begin(), local_commands.end());
        }
        return {matching(names, "", c.text)};
    }
    if (before[0] == "use") {
        return before.size() == 1 ? complete_value(word_kind::name, "worlds", c, source) : completion{};
    }
    const verb* v = find_verb(before[0]);
    std::size_t verb_words = 1;
    if (v == nullptr && before.size() >= 2) {
        v = find_verb(before[0] + " " + before[1]);
        verb_words = 2;
    }
    if (v != nullptr) {
        return complete_verb_word(*v, std::span(before).subspan(verb_words), c, source);
    }
    if (before.size() == 1) {  // a group's verbs: `world <Tab>`
        for (const auto& member : table) {
            if (member.name.starts_with(before[0] + " ")) {
                names.emplace_back(member.name.substr(before[0].size() + 1));
            }
        }
    }
    return {matching(names, "", c.text)};
}

completion sorted(completion found) {
    std::sort(found.candidates.begin(), found.candidates.end());
    found.candidates.erase(std::unique(found.candidates.begin(), found.candidates.end()),
                           found.candidates.end());
    return found;
}

}  // namespace

std::vector<std::string> names_in(const json& listing) {
    std::vector<std::string> names;
    if (listing.is_array()) {
        for (const auto& item : listing) {
            if (item.is_string()) {
                add_unique(names, item.get<std::string>());
            }
            if (item.is_object() && item.contains("name") && item["name"].is_string()) {
                add_unique(names, item["name"].get<std::string>());
            }
        }
        return names;
    }
    if (!listing.is_object()) {
        return names;
    }
    for (const auto& [key, value] : listing.items()) {
        if (value.is_array()) {
            return names_in(value);
        }
    }
    for (const auto& [key, value] : listing.items()) {
        if (value.is_object()) {
            add_unique(names, key);
        }
    }
    return names;
}

completion_source::completion_source(session& s)
    : completion_source(
          [&s](const std::string& method, const json& params) {
              request req{method, params};
              apply_world(req, s.world);
              return s.client.call(req.method, req.params);
          },
          listing_max_age) {}

completion_source::completion_source(lister ask, std::chrono::steady_clock::duration max_age)
    : ask_(std::move(ask)), max_age_(max_age) {}

const std::vector<std::string>& completion_source::names(std::string_view kind) {
    const auto now = std::chrono::steady_clock::now();
    if (const auto it = cache_.find(kind); it != cache_.end() && now - it->second.asked < max_age_) {
        return it->second.names;
    }
    // Which method lists each kind of name.
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> listings{{
        {"methods", "rpc.discover"},
        {"components", "world.list_components"},
        {"systems", "world.list_systems"},
        {"spells", "world.list_spells"},
        {"actions", "world.list_actions"},
        {"worlds", "world.list"},
        {"prefabs", "world.list_prefabs"},
    }};
    std::string method;
    for (const auto& [name, listed_by] : listings) {
        if (name == kind) {
            method = listed_by;
        }
    }
    std::vector<std::string> found;
    if (!method.empty()) {
        try {
            const auto answer = ask_(method, json::object());
            found =
                names_in(kind == "methods" && answer.is_object() ? answer.value("methods", json()) : answer);
        } catch (const std::exception&) {
            // No server, or no such method yet: complete nothing rather than interrupt the typing.
        }
    }
    auto& entry = cache_[std::string(kind)];
    entry = {std::move(found), now};
    return entry.names;
}

completion complete_line(std::string_view line, completion_source* source) {
    auto c = context_of(line);
    if (!c) {
        return {};
    }
    return sorted(complete_in(std::move(*c), source));
}

std::vector<std::string> complete(const std::vector<std::string>& before, std::string_view prefix,
                                  completion_source* source) {
    const word_context c{before, std::string(prefix), prefix, unreadable(prefix)};
    return sorted(complete_in(c, source)).candidates;
}

exit_code run_shell(session& s) {
    completion_source source(s);
    active_source = &source;
    rl_readline_name = "ecsctl";
    rl_attempted_completion_function = attempt_completion;
    // `=` and `:` are part of words such as Position={"x":0}; only blanks separate words.
    rl_completer_word_break_characters = const_cast<char*>(" \t\n");

    const std::string history = history_path();
    using_history();
    stifle_history(1000);
    if (!history.empty()) {
        read_history(history.c_str());
    }

    *s.out << ecsd::protocol::version_line("ecsctl") << " — type help for the verbs, exit to leave\n";
    guarded(s, "ecsctl", [&] { (void)s.client.call("server.ping"); });

    std::string last;
    for (;;) {
        const std::string prompt = s.client.peer() + (s.world ? "/" + *s.world : std::string{}) + "> ";
        char* raw = readline(prompt.c_str());
        if (raw == nullptr) {
            *s.out << '\n';
            break;
        }
        const std::string line(raw);
        std::free(raw);  // NOLINT(cppcoreguidelines-no-malloc): readline allocates with malloc
        if (line.find_first_not_of(" \t") != std::string::npos && line != last) {
            add_history(line.c_str());
            last = line;
        }
        line_effect effect = line_effect::none;
        if (s.tables.max_width != 0) {
            s.tables.max_width =
                std::max<std::size_t>(terminal_width(), 1);  // the window may have been resized
        }
        (void)run_line(s, line, "error", /*interactive=*/true, &effect);
        source.forget();  // `world create`, `use`, `register`...: ask again at the next Tab
        if (effect == line_effect::quit) {
            break;
        }
    }
    if (!history.empty()) {
        write_history(history.c_str());
        history_truncate_file(history.c_str(), 1000);
    }
    active_source = nullptr;
    return exit_code::ok;
}

}  // namespace ecsd::cli
