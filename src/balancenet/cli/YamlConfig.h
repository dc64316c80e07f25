// YamlConfig: `--config run.yaml` for `balancenet train`: every flag as a key, command-line flags win.
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace balancenet::cli {

// A config file is a flat YAML map whose keys are the subcommand's flag names without the dashes
// (`global-batch: 256`, or `global_batch: 256`); a key given twice (in either spelling, or as an alias)
// is an error; a sequence becomes the comma list the flag takes (`split: [100, 28]`), and a switch takes
// true or false. When `args` (a whole command line) holds `--config FILE` after
// `subcommand`, the file's entries are inserted as flags right after the subcommand name: every train
// flag takes its last value, so flags given on the command line override the file. Unknown keys and
// malformed files are CLI::ConfigError naming the key or the line.
std::vector<std::string> expandConfigFile(const std::vector<std::string>& args, const CLI::App& subcommand);

// The effective configuration of a parsed subcommand as YAML (usable as --config): every option's value,
// given or default; options without a default that were not given are left out.
std::string effectiveConfigYaml(const CLI::App& subcommand);

}  // namespace balancenet::cli
