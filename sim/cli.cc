#include "sim/cli.h"

#include <cstdlib>
#include <filesystem>

#include "core/verify.h"
#include "sim/run.h"

namespace ringsim::sim {

void ConfigOptions::add_to(CLI::App& app) {
  const char* group = "Run configuration (default: drawn per seed)";
  for (const Param& param : params()) {
    if (std::string(param.name) == "seed") continue;  // the commands' own --seed is the first seed
    Given& g = given_.emplace_back(Given{&param, ""});
    const Param* p = &param;
    g.option = app.add_option(param.flag(), g.text, param.help)
                   ->check(CLI::Validator(
                       [p](std::string& text) -> std::string {
                         std::uint64_t value = 0;
                         if (p->parse(text, value)) return "";
                         if (p->is_choice()) {
                           std::string names;
                           for (const char* c : p->choices) names += (names.empty() ? "" : ", ") + std::string(c);
                           return text + " is not one of " + names;
                         }
                         return text + " is not a number in " + std::to_string(p->min) + ".." + std::to_string(p->max);
                       },
                       param.is_choice() ? "NAME" : "UINT"))
                   ->group(group);
  }
}

Overrides ConfigOptions::overrides() const {
  Overrides out;
  for (const Given& g : given_) {
    if (g.option->count() == 0) continue;
    std::uint64_t value = 0;
    VERIFY(g.param->parse(g.text, value));  // the option's validator accepted it
    out.set(*g.param, value);
  }
  return out;
}

std::string user_path(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  const char* base = std::getenv("BUILD_WORKING_DIRECTORY");
  if (base == nullptr || *base == '\0') return path;
  return (std::filesystem::path(base) / path).string();
}

}  // namespace ringsim::sim
