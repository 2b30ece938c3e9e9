#include "sweep_command.hpp"

#include <string_view>

#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/config/object_reader.hpp"

namespace pipelens {
BackendChoice selectSweepBackend(const SweepSpec& spec, std::vector<std::string>& notices) {
    std::size_t probe = 0;
    for (std::size_t i = 0; i < spec.points(); ++i) {
        if (spec.pointConfig(i).objective.gradientNoise > 0.0) {
            probe = i;
            break;
        }
    }
    return selectBackend(spec.pointConfig(probe), notices);
}

namespace {

// A path as a POSIX shell reads it back: as is when it holds only safe characters, else in
// single quotes (a quote inside written '\'').
std::string shellWord(std::string_view s) {
    constexpr std::string_view kSafe =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-+,:@%=";
    if (!s.empty() && s.find_first_not_of(kSafe) == std::string_view::npos) return std::string(s);
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

}  // namespace

std::string sweepResumeCommand(const SweepCommand& command) {
    std::string s = "pipelens-cli sweep " + shellWord(command.specPath) + " --out " +
                    shellWord(command.outDir) + " --resume";
    if (!command.stepRule.empty()) s += " --step-rule " + shellWord(command.stepRule);
    if (!command.budgetRule.empty()) s += " --budget-rule " + shellWord(command.budgetRule);
    return s;
}

StepRuleSpec parseStepRuleOption(const std::string& text) {
    const std::string field = "--step-rule";
    if (!text.empty() && text.front() == '{') {
        return parseStepRuleSpec(parseConfigText(text, field), field);
    }
    const std::size_t colon = text.find(':');
    const std::string kind = text.substr(0, colon);
    if (kind != "best_final" && kind != "stable") {
        throw ConfigError(field + " = " + showConfigValue(nlohmann::json(text)) +
                          " is not allowed: best_final, stable, stable:PRESET (PRESET one of "
                          "lm_script, notebook) or a JSON object {\"kind\": \"stable\", ...}");
    }
    nlohmann::json rule = kind;
    if (colon != std::string::npos) {
        rule = {{"kind", kind}, {"preset", text.substr(colon + 1)}};
    }
    return parseStepRuleSpec(rule, field);
}

void printSweepResumeHint(const SweepCommand& command, std::ostream& err) {
    err << "pipelens-cli: the finished points are kept in " << command.outDir
        << "; to continue the sweep run: " << sweepResumeCommand(command) << '\n';
}

void printSweepProgress(std::ostream& err, const SweepProgress& p) {
    err << sweepProgressLine(p) << '\n';
}

int reportSweepEnd(const SweepCommand& command, const std::string& folderPath,
                   const SweepPoints& points, std::ostream& out, std::ostream& err) {
    std::size_t done = 0;
    for (const auto& p : points) done += p ? 1 : 0;
    if (done < command.spec.points()) {
        err << "pipelens-cli: sweep interrupted: " << done << " of " << command.spec.points()
            << " points are in " << folderPath
            << "; to continue it run: " << sweepResumeCommand(command) << '\n';
        return 130;
    }
    if (!command.quiet) {
        out << "sweep " << command.spec.name << ": " << command.spec.points() << " points over "
            << sweepAxisName(command.spec.axis) << " written to " << folderPath << '\n';
    }
    return 0;
}

}  // namespace pipelens
