// YAML config files as extra command-line flags (yaml-cpp), and back.
#include "balancenet/cli/YamlConfig.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace balancenet::cli {
namespace {

const CLI::Option* optionNamed(const CLI::App& app, const std::string& key) {
  for (const CLI::Option* option : app.get_options()) {
    const auto& names = option->get_lnames();
    if (std::find(names.begin(), names.end(), key) != names.end()) return option;
  }
  return nullptr;
}

std::string valueOf(const std::string& key, const YAML::Node& value) {
  if (value.IsScalar()) return value.Scalar();
  if (value.IsSequence()) {
    std::vector<std::string> items;
    for (const auto& item : value) {
      if (!item.IsScalar())
        throw CLI::ConfigError(fmt::format("config key '{}': lists may hold only plain values", key));
      items.push_back(item.Scalar());
    }
    return fmt::format("{}", fmt::join(items, ","));
  }
  if (value.IsNull()) throw CLI::ConfigError(fmt::format("config key '{}' has no value", key));
  throw CLI::ConfigError(fmt::format("config key '{}': nested maps are not flags; use one flat map", key));
}

std::vector<std::string> flagsFromFile(const std::string& path, const CLI::App& app) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw CLI::ConfigError(fmt::format("--config {}: cannot be read", path));
  } catch (const YAML::Exception& e) {
    throw CLI::ConfigError(fmt::format("--config {} is not valid YAML: {}", path, e.what()));
  }
  if (root.IsNull()) return {};
  if (!root.IsMap())
    throw CLI::ConfigError(fmt::format("--config {} must hold a map of flag names to values, e.g. 'steps: 500'", path));
  std::vector<std::string> flags;
  std::map<const CLI::Option*, std::string> seen;  // yaml-cpp keeps a repeated key; the file would mean two values
  for (const auto& entry : root) {
    // global_batch is global-batch: most YAML files spell keys with underscores.
    auto key = entry.first.as<std::string>();
    std::replace(key.begin(), key.end(), '_', '-');
    const CLI::Option* option = optionNamed(app, key);
    if (!option || key == "help" || key == "print-config")
      throw CLI::ConfigError(
          fmt::format("unknown key '{}' in --config {} (keys are train flags without '--')", key, path));
    if (key == "config") throw CLI::ConfigError(fmt::format("--config {} cannot name another config file", path));
    if (auto [it, added] = seen.emplace(option, entry.first.as<std::string>()); !added)
      throw CLI::ConfigError(fmt::format("config key '{}' is given twice in --config {} (also as '{}'); keep one",
                                         entry.first.as<std::string>(), path, it->second));
    const auto value = valueOf(key, entry.second);
    if (option->get_expected_max() == 0) {  // a switch: true or false
      if (value != "true" && value != "false")
        throw CLI::ConfigError(fmt::format("config key '{}' is a switch: true or false, not '{}'", key, value));
      if (value == "true") flags.push_back("--" + key);
    } else {
      flags.push_back("--" + key);
      flags.push_back(value);
    }
  }
  return flags;
}

}  // namespace

std::vector<std::string> expandConfigFile(const std::vector<std::string>& args, const CLI::App& subcommand) {
  const auto sub = std::find(args.begin(), args.end(), subcommand.get_name());
  if (sub == args.end()) return args;
  std::string path;
  for (auto it = sub + 1; it != args.end(); ++it) {
    if (*it == "--config" && it + 1 != args.end()) path = *(it + 1);
    if (it->rfind("--config=", 0) == 0) path = it->substr(9);
  }
  if (path.empty()) return args;
  std::vector<std::string> out(args.begin(), sub + 1);
  const auto fromFile = flagsFromFile(path, subcommand);
  out.insert(out.end(), fromFile.begin(), fromFile.end());
  out.insert(out.end(), sub + 1, args.end());
  return out;
}

std::string effectiveConfigYaml(const CLI::App& app) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const CLI::Option* option : app.get_options()) {
    const auto& names = option->get_lnames();
    if (names.empty() || names.front() == "help" || names.front() == "config" || names.front() == "print-config")
      continue;
    if (names.front() == "job-token") continue;  // a secret: printed configs end up in logs and tickets
    const bool given = option->count() > 0;
    if (option->get_expected_max() == 0) {  // switches: true or false
      out << YAML::Key << names.front() << YAML::Value << (given ? "true" : "false");
      continue;
    }
    const std::string value = given ? option->results().back() : option->get_default_str();  // the last one wins
    if (!given && value.empty()) continue;  // no default worth printing: the program decides
    out << YAML::Key << names.front() << YAML::Value << value;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace balancenet::cli
