#include "verb_parser.hpp"

#include <algorithm>
#include <sstream>

#include "errors.hpp"

namespace ecsd::cli {

namespace {

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
    return sub;
}

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
    std::string text;
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
        std::string message = e.what();
        if (const auto* v = parser.selected(); v == nullptr && !words.empty() &&
                                               find_verb(words.front()) == nullptr &&
                                               words.front() != "world" && words.front() != "prefab") {
            message = "unknown verb '" + words.front() + "' (try: help)";
        }
        throw usage_error(message);
    }
    return {parser.selected(), parser.input()};
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
