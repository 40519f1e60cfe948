#include "session.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <ostream>
#include <thread>

#include "expect.hpp"
#include "shell.hpp"
#include "verb_parser.hpp"
#include "watch.hpp"

namespace ecsd::cli {

namespace {

constexpr std::string_view local_help = R"(Local commands (scripts and the shell):
  $name = VERB ...   run VERB and keep its result in $name: the entity id for spawn-like results
                     ({"entity": N}), otherwise the whole result; use it as $name, ${name} or
                     ${name.path.0} in later lines ($$ is a literal $)
  $name = EXPR       arithmetic: numbers, $variables holding numbers, + - * / and parentheses,
                     e.g. $x = ($i - 2) * 0.8; whole results are integers; $copy = $orig copies
  use WORLD          send later world.* calls to WORLD
  vars               list the variables
  echo WORDS...      print the words (after substitution)
  expect A OP B      fail the script (NAME:LINE: expectation failed, exit 1) unless A OP B holds;
                     OP is == != < <= > >=, values read as JSON or text: expect ${r.total} == 0;
                     expect A alone checks A is true (not false, null, 0, "", [] or {}); alias assert
  repeat N COMMAND   run COMMAND N times with $i = 0..N-1; in scripts also a block:
                       repeat 20 {
                         prefab spawn slime Position='{"x":$i,"y":10}'
                       }
                     (any lines inside, repeats too; `}` alone on its line ends the block)
  sleep SECONDS      wait (fractions allowed), e.g. for ticks to pass on a running world
  help [VERB]        this text, or a verb's help
  exit, quit         leave (end of input does too)
)";

/// @brief `e` with `; did you mean 'Position'?` added when it is no_such_component for a name (quoted
///        in its message) within two edits of a component the server has (`spawn Postion`); else `e`.
///        The names come from world.list_components of the session's world, as completion's do.
server_error with_suggestion(session& s, const server_error& e) {
    if (e.reason() != "no_such_component") {
        return e;
    }
    std::vector<std::string> names;
    try {
        request req{"world.list_components", json::object()};
        apply_world(req, s.world);
        names = names_in(s.client.call(req.method, req.params));
    } catch (const std::exception&) {
        return e;  // no list, no suggestion: the server's own message still says what is wrong
    }
    const std::string& message = e.message();
    for (std::size_t open = message.find('\''); open != std::string::npos;) {
        const auto close = message.find('\'', open + 1);
        if (close == std::string::npos) {
            break;
        }
        const std::string word = message.substr(open + 1, close - open - 1);
        if (std::find(names.begin(), names.end(), word) == names.end()) {
            if (const auto suggestion = closest(word, names); !suggestion.empty()) {
                json error = e.error();
                error["message"] = message + "; did you mean '" + suggestion + "'?";
                return server_error(error);
            }
        }
        open = message.find('\'', close + 1);
    }
    return e;
}

}  // namespace

std::span<const std::string_view> local_command_names() noexcept {
    static constexpr std::array<std::string_view, 10> names{"echo",   "use",   "vars", "expect", "assert",
                                                            "repeat", "sleep", "help", "exit",   "quit"};
    return names;
}

std::uint64_t repeat_count(const std::vector<std::string>& words, const variables& vars) {
    if (words.size() < 2) {
        throw usage_error("usage: repeat N COMMAND, or repeat N { on its own line, then lines, then }");
    }
    const auto v = json::parse(substitute(words[1], vars), nullptr, /*allow_exceptions=*/false);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
        throw usage_error("repeat: the count must be a whole number from 0 to 1000000, got '" + words[1] +
                          "'");
    }
    const auto n = v.get<std::uint64_t>();
    if (n > 1'000'000) {
        throw usage_error("repeat: the count must be a whole number from 0 to 1000000, got '" + words[1] +
                          "'");
    }
    return n;
}

json run_verb(session& s, const verb& v, const verb_input& input) {
    if (v.drive) {
        return v.drive(s, input);
    }
    request req = v.build(input);
    if (req.method.empty()) {
        throw usage_error("missing method name");
    }
    apply_world(req, s.world);
    s.tables.component_order = requested_columns(req);
    json result;
    try {
        result = s.client.call(req.method, req.params);
    } catch (const server_error& e) {
        throw with_suggestion(s, e);
    }
    if (v.shape) {
        result = v.shape(result);
    }
    return result;
}

std::string present(const session& s, const verb& v, const json& result) {
    if (result.is_discarded()) {
        return {};  // the verb printed what it had to say itself (`export` onto standard output)
    }
    if (s.format == output_format::table && v.table_text) {
        return v.table_text(result, s.tables);
    }
    if (s.format == output_format::table && v.table_view) {
        return render(v.table_view(result), s.format, s.tables);
    }
    return render(result, s.format, s.tables);
}

exit_code guarded(session& s, std::string_view where, const std::function<void()>& f) {
    try {
        f();
        return exit_code::ok;
    } catch (const server_error& e) {
        *s.err << where << ": " << e.reason() << ": " << e.message() << '\n';
        return exit_code::server_error;
    } catch (const usage_error& e) {
        *s.err << where << ": " << e.what() << '\n';
        return exit_code::usage;
    } catch (const expectation_failed& e) {
        *s.err << where << ": expectation failed: " << e.what() << '\n';
        return exit_code::server_error;
    } catch (const connection_error& e) {
        *s.err << where << ": " << e.what() << '\n';
        return exit_code::connection;
    } catch (const std::exception& e) {  // a bug, but never a crash
        *s.err << where << ": internal error: " << e.what() << '\n';
        return exit_code::server_error;
    }
}

void execute_line(session& s, std::string_view line, bool interactive, line_effect* effect) {
    if (effect != nullptr) {
        *effect = line_effect::none;
    }
    auto parsed = parse_line(line);
    if (parsed.words.empty()) {
        return;
    }
    if (!parsed.assign_to && parsed.words.front() == "repeat") {
        // Before substitution: the command repeated sees $i change from one run to the next.
        if (parsed.words.size() >= 3 && parsed.words.back() == "{") {
            throw usage_error(
                "repeat N { ... } spans lines: it works in scripts (-f FILE or stdin); "
                "on one line write repeat N COMMAND");
        }
        const auto count = repeat_count(parsed.words, s.vars);
        const std::string rest(words_after(line, 2));
        if (rest.empty()) {
            throw usage_error("usage: repeat N COMMAND, or repeat N { on its own line, then lines, then }");
        }
        for (std::uint64_t i = 0; i < count; ++i) {
            s.vars["i"] = i;
            execute_line(s, rest, interactive, effect);
            if (effect != nullptr && *effect == line_effect::quit) {
                return;
            }
        }
        return;
    }
    if (parsed.assign_to && is_expression(parsed.words)) {
        // `$x = $i * 0.8`: arithmetic, evaluated here (its variables are read as numbers, not text).
        auto value = evaluate(parsed.words, s.vars);  // before the slot exists: `$x = $x + 1` reads the old
        auto& slot = s.vars[*parsed.assign_to];
        slot = std::move(value);
        if (interactive) {
            *s.out << '$' << *parsed.assign_to << " = " << render(slot, output_format::json_lines);
        }
        return;
    }
    for (auto& word : parsed.words) {
        word = substitute(word, s.vars);
    }
    const auto& words = parsed.words;
    const std::string& head = words.front();
    if (!parsed.assign_to) {
        if (head == "exit" || head == "quit") {
            if (effect != nullptr) {
                *effect = line_effect::quit;
            }
            return;
        }
        if (head == "help") {
            std::string name;
            for (std::size_t i = 1; i < words.size(); ++i) {
                name += (i > 1 ? " " : "") + words[i];
            }
            const std::string text = help_text(name);
            if (!name.empty() && text.empty()) {
                throw usage_error("no verb called '" + name + "'");
            }
            *s.out << text;
            if (name.empty()) {
                *s.out << '\n' << local_help;
            }
            return;
        }
        if (head == "use") {
            if (words.size() != 2) {
                throw usage_error("usage: use WORLD");
            }
            s.world = words[1];
            return;
        }
        if (head == "vars") {
            json all = json::object();
            for (const auto& [name, value] : s.vars) {
                all[name] = value;
            }
            *s.out << render(all, s.format, s.tables);
            return;
        }
        if (head == "expect" || head == "assert") {
            if (auto failure = failed_expectation({words.begin() + 1, words.end()})) {
                throw expectation_failed(*failure);
            }
            return;
        }
        if (head == "sleep") {
            double seconds = -1;
            if (words.size() == 2) {
                const auto v = json::parse(words[1], nullptr, /*allow_exceptions=*/false);
                if (v.is_number()) seconds = v.get<double>();
            }
            if (!(seconds >= 0 && seconds <= 3600)) {
                throw usage_error("usage: sleep SECONDS (0 to 3600, fractions allowed)");
            }
            std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
            return;
        }
        if (head == "echo") {
            std::string text;
            for (std::size_t i = 1; i < words.size(); ++i) {
                text += (i > 1 ? " " : "") + words[i];
            }
            *s.out << text << '\n';
            return;
        }
    }
    const auto command = parse_words(words, *s.out);
    if (command.row == nullptr) {
        return;  // help was printed
    }
    if (command.row->streams) {
        if (parsed.assign_to) {
            throw usage_error(std::string(command.row->name) +
                              " streams until stopped: it cannot be assigned");
        }
        run_stream(s, *command.row, command.input);
        return;
    }
    const auto result = run_verb(s, *command.row, command.input);
    if (parsed.assign_to) {
        auto& slot = s.vars[*parsed.assign_to];
        slot = value_to_store(result);
        if (interactive) {
            *s.out << '$' << *parsed.assign_to << " = " << render(slot, output_format::json_lines);
        }
        return;
    }
    *s.out << present(s, *command.row, result);
}

exit_code run_line(session& s, std::string_view line, std::string_view where, bool interactive,
                   line_effect* effect) {
    const auto code = guarded(s, where, [&] { execute_line(s, line, interactive, effect); });
    s.out->flush();
    return code;
}

}  // namespace ecsd::cli
