// docs/ecsctl.md cannot drift from the verb table: every verb has its row in the reference.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "verbs.hpp"

TEST(DocsDrift, EcsctlMdHasARowForEveryVerb) {
    std::ifstream in(ECSD_SOURCE_DIR "/docs/ecsctl.md");
    ASSERT_TRUE(in.good());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_FALSE(ecsd::cli::verbs().empty());
    for (const auto& v : ecsd::cli::verbs()) {
        const std::string start = "| `" + std::string(v.name);
        bool found = false;
        for (const auto& l : lines) {
            found = found || (l.starts_with(start) && l.size() > start.size() &&
                              (l[start.size()] == ' ' || l[start.size()] == '`'));
        }
        EXPECT_TRUE(found) << "docs/ecsctl.md has no table row for the verb '" << v.name << "'";
    }
}
