#include <cstdio>

#include "ecsd/protocol/version.hpp"

int main() {
    std::puts(ecsd::protocol::version_line("ecsctl"));
    return 0;
}
