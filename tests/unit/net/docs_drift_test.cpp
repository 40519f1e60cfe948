// Docs cannot drift from the tables they describe: docs/protocol.md has a section (a heading naming it)
// for every method in the method table, and its Errors section a row for every error reason with its code;
// every flag of the settings table is named in docs/protocol.md (or docs/http.md, the HTTP face's).
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "config.hpp"
#include "ecsd/protocol/errors.hpp"
#include "methods/methods.hpp"
#include "rpc/method_table.hpp"

namespace {

constexpr const char* protocol_md = ECSD_SOURCE_DIR "/docs/protocol.md";

std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

/// @brief The lines of the `## title` section, up to the next `## ` heading (its ### and #### inside).
std::vector<std::string> section(const std::vector<std::string>& lines, std::string_view title) {
    const std::string heading = "## " + std::string(title);
    std::vector<std::string> out;
    bool inside = false;
    for (const auto& l : lines) {
        if (l.starts_with("## ")) inside = l == heading;
        if (inside) out.push_back(l);
    }
    return out;
}

}  // namespace

TEST(DocsDrift, ProtocolMdHasASectionForEveryMethod) {
    ecsd::net::method_table table;
    ecsd::net::register_all_methods(table);
    const auto methods = section(lines_of(protocol_md), "Methods");
    ASSERT_FALSE(methods.empty()) << protocol_md << " has no '## Methods' section";
    ASSERT_FALSE(table.methods().empty());
    for (const auto& m : table.methods()) {
        const std::string quoted = "`" + m.name + "`";
        bool found = false;
        for (const auto& l : methods)
            found = found || (l.starts_with("#") && l.find(quoted) != std::string::npos);
        EXPECT_TRUE(found) << "docs/protocol.md: the method " << m.name
                           << " has no section: no heading under "
                           << "'## Methods' names " << quoted;
    }
}

TEST(DocsDrift, ProtocolMdErrorsSectionHasARowForEveryReasonWithItsCode) {
    const auto errors = section(lines_of(protocol_md), "Errors");
    ASSERT_FALSE(errors.empty()) << protocol_md << " has no '## Errors' section";
    ASSERT_FALSE(ecsd::protocol::all_reasons().empty());
    for (const auto& r : ecsd::protocol::all_reasons()) {
        const std::string row = "| `" + std::string(r.name) + "` | " + std::to_string(r.code) + " |";
        bool found = false;
        for (const auto& l : errors) found = found || l.starts_with(row);
        EXPECT_TRUE(found) << "docs/protocol.md: the error reason " << r.name << " (code " << r.code
                           << ") is not documented: no row starting '" << row << "' under '## Errors'";
    }
}

TEST(DocsDrift, EveryFlagIsDocumented) {
    std::string docs;
    for (const char* path : {ECSD_SOURCE_DIR "/docs/protocol.md", ECSD_SOURCE_DIR "/docs/http.md"})
        for (const auto& l : lines_of(path)) docs += l + "\n";
    ASSERT_FALSE(ecsd::net::settings().empty());
    for (const auto& s : ecsd::net::settings()) {
        const std::string flag = "`--" + std::string(s.name);
        const bool found =
            docs.find(flag + "`") != std::string::npos || docs.find(flag + " ") != std::string::npos;
        EXPECT_TRUE(found) << "the flag --" << s.name
                           << " is named nowhere in docs/protocol.md or docs/http.md "
                           << "(as `--" << s.name << "`)";
    }
}
