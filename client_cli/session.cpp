#include "session.hpp"

#include <ostream>

#include "verb_parser.hpp"

namespace ecsd::cli {

namespace {

constexpr std::string_view local_help = R"(Local commands (scripts and the shell):
  $name = VERB ...   run VERB and keep its result in $name: the entity id for spawn-like results
                     ({"entity": N}), otherwise the whole result; use it as $name, ${name} or
                     ${name.path.0} in later lines ($$ is a literal $)
  use WORLD          send later world.* calls to WORLD
  vars               list the variables
  echo WORDS...      print the words (after substitution)
  help [VERB]        this text, or a verb's help
  exit, quit         leave (end of input does too)
)";

}  // namespace

json run_verb(session& s, const verb& v, const verb_input& input) {
    request req = v.build(input);
    if (req.method.empty()) {
        throw usage_error("missing method name");
    }
    apply_world(req, s.world);
    auto result = s.client.call(req.method, req.params);
    if (v.shape) {
        result = v.shape(result);
    }
    return result;
}

std::string present(const session& s, const verb& v, const json& result) {
    if (s.format == output_format::table && v.table_view) {
        return render(v.table_view(result), s.format);
    }
    return render(result, s.format);
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
    } catch (const connection_error& e) {
        *s.err << where << ": " << e.what() << '\n';
        return exit_code::connection;
    } catch (const std::exception& e) {  // a bug, but never a crash
        *s.err << where << ": internal error: " << e.what() << '\n';
        return exit_code::server_error;
    }
}

exit_code run_line(session& s, std::string_view line, std::string_view where, bool interactive,
                   line_effect* effect) {
    if (effect != nullptr) {
        *effect = line_effect::none;
    }
    const auto code = guarded(s, where, [&] {
        auto parsed = parse_line(line);
        if (parsed.words.empty()) {
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
                *s.out << render(all, s.format);
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
    });
    s.out->flush();
    return code;
}

}  // namespace ecsd::cli
