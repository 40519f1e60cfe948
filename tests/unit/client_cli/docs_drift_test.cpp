// docs/ecsctl.md cannot drift from the verb table: every verb has its row in the Verbs reference, and
// that row names the method the verb calls.
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "session.hpp"
#include "verbs.hpp"

namespace {

/// @brief The lines of the `## Verbs` section of docs/ecsctl.md (its ### tables included).
std::vector<std::string> verbs_section() {
    std::ifstream in(ECSD_SOURCE_DIR "/docs/ecsctl.md");
    EXPECT_TRUE(in.good()) << "cannot read " << ECSD_SOURCE_DIR "/docs/ecsctl.md";
    std::vector<std::string> out;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("## ")) inside = line == "## Verbs";
        if (inside) out.push_back(line);
    }
    return out;
}

/// @brief Table rows whose first cell is the verb `name`, alone or followed by its arguments.
std::vector<std::string> rows_of(const std::vector<std::string>& lines, std::string_view name) {
    const std::string start = "| `" + std::string(name);
    std::vector<std::string> out;
    for (const auto& l : lines) {
        if (l.starts_with(start) && l.size() > start.size() &&
            (l[start.size()] == ' ' || l[start.size()] == '`')) {
            out.push_back(l);
        }
    }
    return out;
}

}  // namespace

TEST(DocsDrift, EcsctlMdHasARowForEveryVerbNamingItsMethod) {
    const auto lines = verbs_section();
    ASSERT_FALSE(lines.empty()) << "docs/ecsctl.md has no '## Verbs' section";
    ASSERT_FALSE(ecsd::cli::verbs().empty());
    for (const auto& v : ecsd::cli::verbs()) {
        const auto rows = rows_of(lines, v.name);
        EXPECT_FALSE(rows.empty()) << "docs/ecsctl.md: the verb '" << v.name
                                   << "' is not documented: no table row under '## Verbs' starts '| `"
                                   << v.name << "'";
        if (rows.empty() || v.method.empty()) continue;
        // The second cell starts with the method: "| `step [TICKS]` | `world.step {ticks}` ...".
        const std::string cell = " | `" + std::string(v.method);
        bool named = false;
        for (const auto& row : rows) {
            const auto end_of_first = row.find("` |", 2);
            named = named || (end_of_first != std::string::npos &&
                              row.compare(end_of_first + 1, cell.size(), cell) == 0);
        }
        EXPECT_TRUE(named) << "docs/ecsctl.md: no row of the verb '" << v.name << "' names its method "
                           << v.method << " in the method column";
    }
}

TEST(DocsDrift, EcsctlMdListsEveryLocalCommand) {
    std::ifstream in(ECSD_SOURCE_DIR "/docs/ecsctl.md");
    ASSERT_TRUE(in.good());
    std::string table;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("#")) inside = line == "### Local commands";
        if (inside && line.starts_with("| `")) table += line + "\n";
    }
    ASSERT_FALSE(table.empty()) << "docs/ecsctl.md has no '### Local commands' table";
    for (const auto name : ecsd::cli::local_command_names()) {
        EXPECT_NE(table.find("`" + std::string(name)), std::string::npos)
            << "docs/ecsctl.md: the local command '" << name << "' is not in the '### Local commands' table";
    }
}
