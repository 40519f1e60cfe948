#include "shell.hpp"

// readline's headers need stdio first.
#include <readline/history.h>
#include <readline/readline.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>

#include "ecsd/protocol/version.hpp"
#include "line_parser.hpp"
#include "verb_parser.hpp"

namespace ecsd::cli {

namespace {

constexpr std::array<std::string_view, 6> local_commands = {"help", "use", "vars", "echo", "exit", "quit"};

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

char** attempt_completion(const char* text, int start, int /*end*/) {
    rl_attempted_completion_over = 1;  // never fall back to file names
    std::vector<std::string> before;
    try {
        before = split_words(std::string_view(rl_line_buffer, static_cast<std::size_t>(start)));
    } catch (const std::exception&) {
        return nullptr;  // inside an open quote: nothing sensible to offer
    }
    pending = complete(before, text, active_source);
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

const std::vector<std::string>& completion_source::names(std::string_view kind) {
    if (const auto it = cache_.find(kind); it != cache_.end()) {
        return it->second;
    }
    // Which method lists each kind of name.
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> listings{{
        {"methods", "rpc.discover"},
        {"components", "world.list_components"},
        {"systems", "world.list_systems"},
        {"spells", "world.list_spells"},
        {"worlds", "world.list"},
        {"prefabs", "world.list_prefabs"},
    }};
    std::string method;
    for (const auto& [name, lister] : listings) {
        if (name == kind) {
            method = lister;
        }
    }
    std::vector<std::string> found;
    if (!method.empty()) {
        try {
            request req{method, json::object()};
            apply_world(req, session_.world);
            const auto listing = session_.client.call(req.method, req.params);
            found = names_in(kind == "methods" && listing.is_object() ? listing.value("methods", json())
                                                                      : listing);
        } catch (const std::exception&) {
            // No server, or no such method yet: complete nothing rather than interrupt the typing.
        }
    }
    return cache_.emplace(std::string(kind), std::move(found)).first->second;
}

std::vector<std::string> complete(const std::vector<std::string>& before, std::string_view prefix,
                                  completion_source* source) {
    std::vector<std::string> all;
    const auto& table = verbs();
    if (before.empty()) {
        for (const auto& v : table) {
            add_unique(all, v.name.substr(0, v.name.find(' ')));
        }
        for (const auto c : local_commands) {
            add_unique(all, c);
        }
    } else if (before.size() == 1 && (before[0] == "world" || before[0] == "prefab")) {
        for (const auto& v : table) {
            if (v.name.starts_with(before[0] + " ")) {
                add_unique(all, v.name.substr(before[0].size() + 1));
            }
        }
    } else if (before[0] == "help") {
        for (const auto& v : table) {
            add_unique(all, v.name.substr(0, v.name.find(' ')));
        }
    } else if (before[0] == "use") {
        if (source != nullptr && before.size() == 1) {
            all = source->names("worlds");
        }
    } else {
        const verb* v = find_verb(before[0]);
        if (v == nullptr && before.size() >= 2) {
            v = find_verb(before[0] + " " + before[1]);
        }
        if (v != nullptr) {
            if (prefix.starts_with('-')) {
                for (const auto& o : v->options) {
                    add_unique(all, o.name);
                }
                add_unique(all, "--help");
            } else if (source != nullptr && v->name == "prefab spawn" && before.size() == 2) {
                all = source->names("prefabs");  // the prefab's name, then component overrides
            } else if (source != nullptr && !v->completes.empty()) {
                // `call` completes its method only; the others complete every word.
                if (v->completes != "methods" || before.size() == 1) {
                    all = source->names(v->completes);
                }
            }
        }
    }
    std::vector<std::string> matches;
    for (const auto& name : all) {
        if (name.starts_with(prefix)) {
            matches.push_back(name);
        }
    }
    std::sort(matches.begin(), matches.end());
    return matches;
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
        (void)run_line(s, line, "error", /*interactive=*/true, &effect);
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
