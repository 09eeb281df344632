#include "sim/cli.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "sim/run.h"

namespace ringsim::sim {

void ConfigOptions::add_to(CLI::App& app) {
  for (const ConfigField& field : config_fields()) {
    if (std::string(field.name) == "seed") continue;
    std::string flag = "--" + std::string(field.name);
    for (char& c : flag) c = c == '_' ? '-' : c;
    Integer& slot = integers_.emplace_back(Integer{&field});
    slot.option = app.add_option(flag, slot.value, field.help)
                      ->check(CLI::Range(field.min, field.max))
                      ->group("Run configuration (default: drawn per seed)");
  }
  mode_option_ = app.add_option("--mode", mode_, "ring mode")
                     ->check(CLI::IsMember({"normal", "backward"}))
                     ->group("Run configuration (default: drawn per seed)");
  size_mix_option_ = app.add_option("--size-mix", size_mix_, "record sizes")
                         ->check(CLI::IsMember({"small", "mixed", "large", "huge"}))
                         ->group("Run configuration (default: drawn per seed)");
  output_option_ = app.add_option("--output", output_, "where the record loop writes")
                       ->check(CLI::IsMember({"memory", "serial", "aio"}))
                       ->group("Run configuration (default: drawn per seed)");
  mutant_option_ = app.add_option("--mutant", mutant_,
                                  "run a deliberately broken consumer (implies the mode and output it breaks unless "
                                  "--mode or --output is given)")
                       ->check(CLI::IsMember(mutant_names()))
                       ->group("Run configuration (default: drawn per seed)");
}

std::vector<std::function<void(RunConfig&)>> ConfigOptions::overrides() const {
  // Order matters: the mode and output first (they clear drawn fields that
  // they cannot have), then the mutant (which implies the mode and output it
  // breaks, unless given), then the integer fields, so that an
  // explicit --snapshot-interval-ns with --mode=normal is refused, not
  // silently dropped.
  std::vector<std::function<void(RunConfig&)>> out;
  const bool mode_given = mode_option_->count() > 0;
  if (mode_given) {
    core::RingMode mode{};
    parse_mode(mode_, mode);
    out.push_back([mode](RunConfig& c) {
      c.mode = mode;
      if (mode == core::RingMode::normal && c.aux_overwrite == 0) c.snapshot_interval_ns = 0;
    });
  }
  const bool output_given = output_option_->count() > 0;
  if (output_given) {
    Output output{};
    parse_output(output_, output);
    out.push_back([output](RunConfig& c) { set_output(c, output); });
  }
  if (mutant_option_->count() > 0) {
    Mutant mutant{};
    parse_mutant(mutant_, mutant);
    const bool keep = mode_given || output_given;
    out.push_back([mutant, keep](RunConfig& c) { set_mutant(c, mutant, keep); });
  }
  if (size_mix_option_->count() > 0) {
    SizeMix mix{};
    parse_size_mix(size_mix_, mix);
    out.push_back([mix](RunConfig& c) { c.size_mix = mix; });
  }
  for (const Integer& i : integers_) {
    if (i.option->count() == 0) continue;
    const ConfigField* field = i.field;
    const std::uint64_t value = i.value;
    out.push_back([field, value](RunConfig& c) { field->set(c, value); });
  }
  return out;
}

std::string ConfigOptions::as_args() const {
  std::string args;
  auto add = [&](const std::string& a) { args += (args.empty() ? "" : " ") + a; };
  for (const Integer& i : integers_) {
    if (i.option->count() > 0) add(i.option->get_name() + "=" + std::to_string(i.value));
  }
  if (mode_option_->count() > 0) add("--mode=" + mode_);
  if (output_option_->count() > 0) add("--output=" + output_);
  if (size_mix_option_->count() > 0) add("--size-mix=" + size_mix_);
  if (mutant_option_->count() > 0) add("--mutant=" + mutant_);
  return args;
}

std::string user_path(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  const char* base = std::getenv("BUILD_WORKING_DIRECTORY");
  if (base == nullptr || *base == '\0') return path;
  return (std::filesystem::path(base) / path).string();
}

int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << " (see --help)\n";
    return kExitUsage;
  }
  return -1;
}

}  // namespace ringsim::sim
