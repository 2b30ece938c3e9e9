#pragma once
// The one command-line parser of pipelens-cli (every command, `reproduce` included) and of the
// MPI tool: a small table per command says which options it takes, whether each takes a value,
// and which command kinds (schedule --kind) or experiments (reproduce E1..E5) it applies to.
//
// The rules, as strict as the config reader's (docs/cli.md, "Rules"):
//   --name VALUE or --name=VALUE for an option with a value; --name alone for a flag.
//   A missing value is refused, never taken from the next option ("--out --quiet"). A separate
//   value may begin with '-' only for a numeric option and only if it is a number ("-1", which
//   the option's range check then judges); any other such value is written --name=-value.
//   A flag given a value (--quiet=0), an option given twice, an unknown option (with the closest
//   known name suggested), an option of another kind or experiment, and a positional argument
//   the command does not take are each refused with a ConfigError naming it. "--" ends the
//   options: what follows is positional.
// Every message quotes user input through shownValue(), so no control byte reaches a terminal.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::cmdline {

struct OptionSpec {
    std::string name;                    // without the leading "--"
    bool takesValue = true;              // false: a flag
    bool numeric = false;                // a value like "-1" may follow as a separate argument
    std::vector<std::string> appliesTo;  // values of the command's selector; empty: all
};

struct CommandSpec {
    std::string name;  // "schedule"
    std::vector<OptionSpec> options;
    int maxPositionals = 0;       // how many positional arguments the command takes
    std::string positionalsWhat;  // "one config file", for the stray-argument message
    // What appliesTo refers to: an option's name ("kind"), or "" for the first positional
    // argument (reproduce's experiment). selectorValues lists the values appliesTo may name; an
    // unknown value is left to the command's own check.
    std::string selector;
    std::string selectorLabel;  // "--kind", "experiment"
    std::vector<std::string> selectorValues;
};

class ParsedArgs {
  public:
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string get(const std::string& name, const std::string& def = "") const;
    // An integer in [lo, hi] (checked as 64-bit, so 4294967297 is refused, not wrapped).
    int integer(const std::string& name, int def, int lo, int hi) const;
    // A finite number.
    double number(const std::string& name, double def) const;
    const std::vector<std::string>& positional() const { return positional_; }

  private:
    friend ParsedArgs parseArgs(const CommandSpec&, const std::vector<std::string>&);
    std::map<std::string, std::string> values_;
    std::vector<std::string> positional_;
};

// Parses `args` (the arguments after the command name) by `spec`; throws ConfigError.
ParsedArgs parseArgs(const CommandSpec& spec, const std::vector<std::string>& args);
ParsedArgs parseArgs(const CommandSpec& spec, int argc, char** argv, int first);

// The tables of pipelens-cli's commands: schedule, delays, run, sweep, example, devices,
// reproduce, animate. Throws std::out_of_range for another name.
const CommandSpec& commandSpec(const std::string& name);
const std::vector<CommandSpec>& commandSpecs();

// User input as quoted in a message: control bytes, DEL, C1 controls and invalid UTF-8 as \xNN,
// a backslash as \\, and at most `limit` characters (then "...").
std::string shownValue(std::string_view text, std::size_t limit = 60);

// A whole message as printed: control bytes (C0, DEL and the UTF-8 C1 controls) as \xNN, all
// else unchanged. The last guard before a terminal, for messages built elsewhere.
std::string withoutControlBytes(std::string_view message);

}  // namespace pipelens::cmdline
