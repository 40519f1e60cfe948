#pragma once
// Many independent registries by name (seed 004's ECS.fetch_world("Admin")):
// fetching a name twice gives the same registry; each has its own entities,
// component types and ids.

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ecs/registry.hpp"

namespace ecsd::ecs {

class registry_set {
public:
    /// @brief The registry of this name, created empty on first use.
    registry& fetch(const std::string& name) {
        auto& slot = registries_[name];
        if (!slot) slot = std::make_unique<registry>();
        return *slot;
    }
    /// @brief The registry of this name, or nullptr.
    [[nodiscard]] registry* find(std::string_view name) noexcept {
        const auto it = registries_.find(name);
        return it == registries_.end() ? nullptr : it->second.get();
    }
    /// @brief Drops a registry and everything in it; false when there was none.
    bool erase(std::string_view name) {
        const auto it = registries_.find(name);
        if (it == registries_.end()) return false;
        registries_.erase(it);
        return true;
    }
    [[nodiscard]] std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& [name, _] : registries_) out.push_back(name);
        return out;
    }

private:
    std::map<std::string, std::unique_ptr<registry>, std::less<>> registries_;
};

}  // namespace ecsd::ecs
