#include "verb_parser.hpp"

#include <algorithm>
#include <sstream>

#include "errors.hpp"

namespace ecsd::cli {

namespace {

/// @brief True when `word` names a verb group such as `world`.
bool is_group(std::string_view word) {
    const auto& table = verbs();
    return std::any_of(table.begin(), table.end(), [&](const verb& v) {
        return v.name.size() > word.size() && v.name.starts_with(word) && v.name[word.size()] == ' ';
    });
}

/// @brief The help footer of a verb group: its own verbs' examples (not the top level's).
std::string group_footer(const std::string& name) {
    std::string text = "Run `ecsctl " + name + " VERB --help` for a verb's arguments.\n\nExamples:\n";
    for (const auto& v : verbs()) {
        if (v.name.starts_with(name + " ")) {
            for (const auto& e : v.examples) {
                text += "  " + std::string(e) + "\n";
            }
        }
    }
    return text;
}

/// @brief The subcommand `name` of `parent`, created on first use (for groups such as `world`).
CLI::App* group(CLI::App& parent, const std::string& name) {
    for (auto* sub : parent.get_subcommands({})) {
        if (sub->get_name() == name) {
            return sub;
        }
    }
    auto* sub = parent.add_subcommand(
        name, name == "world" ? "manage worlds (create, destroy, info)" : "define, spawn and list prefabs");
    sub->require_subcommand(1);
    sub->footer(group_footer(name));  // else it inherits the top level's
    return sub;
}

/// @brief Levenshtein distance: the fewest insertions, deletions and substitutions from `a` to `b`.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];  // the previous row's value at j - 1
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

}  // namespace

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_distance = 3;
    for (const auto& c : candidates) {
        if (const auto d = edit_distance(word, c); d < best_distance) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

namespace {

std::vector<std::string> split_name(std::string_view name) {
    std::vector<std::string> parts;
    std::istringstream words{std::string(name)};
    for (std::string w; words >> w;) {
        parts.push_back(w);
    }
    return parts;
}

}  // namespace

std::string verb_footer(const verb& v) {
    std::string text(v.details);
    if (!v.details.empty() && !v.method.empty()) {
        text += "\n";
    }
    if (!v.method.empty()) {
        text += "Calls " + std::string(v.method) + ".\n";
    }
    if (!v.examples.empty()) {
        text += "\nExamples:\n";
        for (const auto& e : v.examples) {
            text += "  " + std::string(e) + "\n";
        }
    }
    return text;
}

verb_parser::verb_parser(CLI::App& app) {
    for (const auto& row : verbs()) {
        const auto parts = split_name(row.name);
        CLI::App* parent = &app;
        for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
            parent = group(*parent, parts[i]);
        }
        auto* sub = parent->add_subcommand(parts.back(), std::string(row.summary));
        sub->footer(verb_footer(row));
        auto& input = inputs_.emplace_back();
        for (const auto& arg : row.args) {
            const std::string name(arg.name);
            if (arg.count == arity::one || arg.count == arity::optional) {
                // A single word: bound through a std::string so CLI11 hands it exactly one.
                auto* opt = sub->add_option_function<std::string>(
                    name, [in = &input, name](const std::string& word) { in->values[name] = {word}; },
                    std::string(arg.help));
                if (arg.count == arity::one) {
                    opt->required();
                }
            } else {
                auto* opt = sub->add_option(name, input.values[name], std::string(arg.help));
                if (arg.count == arity::many) {
                    opt->required();
                }
            }
        }
        for (const auto& o : row.options) {
            const std::string name(o.name);
            if (o.is_flag) {
                sub->add_flag_callback(
                    name, [in = &input, name] { in->flags.insert(name); }, std::string(o.help));
            } else {
                // Every occurrence takes one word; repeats accumulate (--fields A --fields B).
                sub->add_option(name, input.values[name], std::string(o.help))
                    ->type_name(std::string(o.value_name))
                    ->expected(1)
                    ->allow_extra_args(false)
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
            }
        }
        entries_.push_back({sub, &row, &input});
    }
}

const verb* verb_parser::selected() const {
    const auto it =
        std::find_if(entries_.begin(), entries_.end(), [](const entry& e) { return e.app->parsed(); });
    return it == entries_.end() ? nullptr : it->row;
}

const verb_input& verb_parser::input() const {
    static const verb_input none;
    const auto it =
        std::find_if(entries_.begin(), entries_.end(), [](const entry& e) { return e.app->parsed(); });
    return it == entries_.end() ? none : *it->input;
}

parsed_words parse_words(const std::vector<std::string>& words, std::ostream& out) {
    CLI::App app{"ecsctl verbs", "ecsctl"};
    app.require_subcommand(1);
    verb_parser parser(app);
    std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 takes them back to front
    try {
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        out << app.help();
        return {};
    } catch (const CLI::CallForAllHelp&) {
        out << app.help("", CLI::AppFormatMode::All);
        return {};
    } catch (const CLI::ParseError& e) {
        throw usage_error(unknown_verb(words).value_or(e.what()));
    }
    return {parser.selected(), parser.input()};
}

std::optional<std::string> unknown_verb(std::span<const std::string> words) {
    if (words.empty() || words.front().starts_with('-') || find_verb(words.front()) != nullptr) {
        return std::nullopt;
    }
    std::vector<std::string> candidates;
    std::string name = words.front();
    std::string lister = "help";
    if (is_group(name)) {
        if (words.size() < 2 || words[1].starts_with('-') || find_verb(name + " " + words[1]) != nullptr) {
            return std::nullopt;  // a bare group, or its --help: CLI11 says what is missing
        }
        for (const auto& v : verbs()) {
            if (v.name.starts_with(name + " ")) {
                candidates.emplace_back(v.name);
            }
        }
        lister += " " + name;
        name += " " + words[1];
    } else {
        for (const auto& v : verbs()) {
            const std::string first(v.name.substr(0, v.name.find(' ')));
            if (std::find(candidates.begin(), candidates.end(), first) == candidates.end()) {
                candidates.push_back(first);
            }
        }
    }
    std::string message = "unknown verb '" + name + "'";
    if (const auto suggestion = closest(name, candidates); !suggestion.empty()) {
        message += "; did you mean '" + suggestion + "'?";
    }
    return message + " (" + lister + " lists them)";
}

std::string help_text(std::string_view name) {
    CLI::App app{"ecsctl: the command-line client of ecsd", "ecsctl"};
    verb_parser parser(app);
    if (name.empty()) {
        return app.help();
    }
    CLI::App* node = &app;
    for (const auto& part : split_name(name)) {
        CLI::App* next = nullptr;
        for (auto* sub : node->get_subcommands({})) {
            if (sub->get_name() == part) {
                next = sub;
            }
        }
        if (next == nullptr) {
            return {};
        }
        node = next;
    }
    return node->help();
}

}  // namespace ecsd::cli
