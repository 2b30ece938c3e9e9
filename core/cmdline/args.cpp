#include "cmdline/args.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "errors.hpp"

namespace pipelens::cmdline {
namespace {

const OptionSpec* findOption(const CommandSpec& spec, std::string_view name) {
    for (const OptionSpec& o : spec.options) {
        if (o.name == name) return &o;
    }
    return nullptr;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

// " (did you mean --resume?)" when one known option is close to `name`, else "".
std::string suggestion(const CommandSpec& spec, std::string_view name) {
    if (name.size() > 64) return "";
    const OptionSpec* best = nullptr;
    std::size_t bestDistance = 3;
    for (const OptionSpec& o : spec.options) {
        std::size_t d = editDistance(name, o.name);
        if (name.size() >= 3 && o.name.rfind(name, 0) == 0) d = std::min<std::size_t>(d, 1);
        if (d < bestDistance) {
            bestDistance = d;
            best = &o;
        }
    }
    return best ? " (did you mean --" + best->name + "?)" : "";
}

bool isNumber(const std::string& text) {
    if (text.empty()) return false;
    char* end = nullptr;
    (void)std::strtod(text.c_str(), &end);
    return *end == '\0';
}

std::string seeHelp(const CommandSpec& spec) {
    return "; see pipelens-cli " + spec.name + " --help";
}

[[noreturn]] void refuse(const std::string& message) {
    throw ConfigError(message);
}

}  // namespace

std::string shownValue(std::string_view text, std::size_t limit) {
    std::string out;
    std::size_t shown = 0;
    auto hex = [&](unsigned char c) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
    };
    std::size_t i = 0;
    while (i < text.size() && shown < limit) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\\') {
            out += "\\\\";
            ++i;
        } else if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
            ++i;
        } else if (c < 0x80) {
            hex(c);
            ++i;
        } else {
            // A whole UTF-8 sequence is kept, except the C1 controls U+0080..U+009F (CSI, OSC
            // and friends to some terminals) and anything malformed.
            const std::size_t length = c >= 0xf0 && c < 0xf5 ? 4
                                       : c >= 0xe0           ? 3
                                       : c >= 0xc2           ? 2
                                                             : 0;
            bool ok = length > 0 && c < 0xf5 && i + length <= text.size();
            for (std::size_t k = 1; ok && k < length; ++k) {
                ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
            }
            if (ok && length == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
                ok = false;
            }
            if (ok && length == 3) {
                const auto d = static_cast<unsigned char>(text[i + 1]);
                ok = !(c == 0xe0 && d < 0xa0) && !(c == 0xed && d >= 0xa0);
            }
            if (ok && length == 4) {
                const auto d = static_cast<unsigned char>(text[i + 1]);
                ok = !(c == 0xf0 && d < 0x90) && !(c == 0xf4 && d >= 0x90);
            }
            if (ok) {
                out.append(text.substr(i, length));
                i += length;
            } else {
                hex(c);
                ++i;
            }
        }
        ++shown;
    }
    if (i < text.size()) out += "...";
    return out;
}

std::string withoutControlBytes(std::string_view message) {
    std::string out;
    out.reserve(message.size());
    for (std::size_t i = 0; i < message.size(); ++i) {
        const auto c = static_cast<unsigned char>(message[i]);
        const bool c1 = c == 0xc2 && i + 1 < message.size() &&
                        static_cast<unsigned char>(message[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(message[i + 1]) < 0xa0;
        if (c < 0x20 || c == 0x7f || c1) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string ParsedArgs::get(const std::string& name, const std::string& def) const {
    auto it = values_.find(name);
    return it == values_.end() ? def : it->second;
}

int ParsedArgs::integer(const std::string& name, int def, int lo, int hi) const {
    if (!has(name)) return def;
    const std::string& v = values_.at(name);
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno == ERANGE || x < lo || x > hi) {
        refuse("--" + name + " = \"" + shownValue(v) + "\" is not allowed: an integer in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return static_cast<int>(x);
}

double ParsedArgs::number(const std::string& name, double def) const {
    if (!has(name)) return def;
    const std::string& v = values_.at(name);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x)) {
        refuse("--" + name + " = \"" + shownValue(v) + "\" is not allowed: a number");
    }
    return x;
}

ParsedArgs parseArgs(const CommandSpec& spec, const std::vector<std::string>& args) {
    ParsedArgs p;
    bool optionsEnded = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const bool looksLikeOption = a.size() > 1 && a[0] == '-';
        if (optionsEnded || !looksLikeOption) {
            if (p.positional_.size() >= static_cast<std::size_t>(spec.maxPositionals)) {
                refuse("unexpected argument \"" + shownValue(a) + "\": " + spec.name + " takes " +
                       (spec.maxPositionals == 0 ? "no arguments besides its options"
                                                 : spec.positionalsWhat) +
                       seeHelp(spec));
            }
            p.positional_.push_back(a);
            continue;
        }
        if (a == "--") {
            optionsEnded = true;
            continue;
        }
        if (a.rfind("--", 0) != 0) {
            refuse("unknown option " + shownValue(a) + " (options begin with --)" + seeHelp(spec));
        }
        const std::size_t eq = a.find('=');
        const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        const OptionSpec* o = findOption(spec, name);
        if (o == nullptr) {
            refuse("unknown option --" + shownValue(name) + suggestion(spec, name) + seeHelp(spec));
        }
        if (p.has(name)) refuse("--" + name + " is given twice; give it once");
        if (!o->takesValue) {
            if (eq != std::string::npos) {
                refuse("--" + name + " is a flag and takes no value (got \"" + shownValue(a) +
                       "\")");
            }
            p.values_[name] = "1";
            continue;
        }
        std::string value;
        if (eq != std::string::npos) {
            value = a.substr(eq + 1);
        } else if (i + 1 >= args.size()) {
            refuse("--" + name + " needs a value");
        } else {
            const std::string& next = args[i + 1];
            if (next.size() > 1 && next[0] == '-' && !(o->numeric && isNumber(next))) {
                if (next.rfind("--", 0) == 0) {
                    const std::string nextName = next.substr(2, next.find('=') - 2);
                    refuse("--" + name + " needs a value; got the option --" +
                           shownValue(nextName));
                }
                refuse("--" + name + " needs a value; got \"" + shownValue(next) +
                       "\", which looks like an option (write --" + name +
                       "=VALUE for a value that begins with -)");
            }
            value = next;
            ++i;
        }
        p.values_[name] = value;
    }
    // Options of another kind or experiment.
    std::string selected;
    if (!spec.selectorValues.empty()) {
        if (!spec.selector.empty()) {
            selected = p.get(spec.selector);
        } else if (!p.positional_.empty()) {
            selected = p.positional_[0];
        }
    }
    if (!selected.empty() && std::find(spec.selectorValues.begin(), spec.selectorValues.end(),
                                       selected) != spec.selectorValues.end()) {
        for (const OptionSpec& o : spec.options) {
            if (o.appliesTo.empty() || !p.has(o.name)) continue;
            if (std::find(o.appliesTo.begin(), o.appliesTo.end(), selected) != o.appliesTo.end()) {
                continue;
            }
            std::string list;
            for (const std::string& v : o.appliesTo) list += (list.empty() ? "" : " or ") + v;
            refuse("--" + o.name + " applies to " + spec.selectorLabel + " " + list +
                   " only, not " + selected);
        }
    }
    return p;
}

ParsedArgs parseArgs(const CommandSpec& spec, int argc, char** argv, int first) {
    std::vector<std::string> args;
    for (int i = first; i < argc; ++i) args.emplace_back(argv[i]);
    return parseArgs(spec, args);
}

const std::vector<CommandSpec>& commandSpecs() {
    static const std::vector<CommandSpec> specs = [] {
        auto value = [](std::string n, std::vector<std::string> applies = {}) {
            return OptionSpec{std::move(n), true, false, std::move(applies)};
        };
        auto numeric = [](std::string n, std::vector<std::string> applies = {}) {
            return OptionSpec{std::move(n), true, true, std::move(applies)};
        };
        auto flag = [](std::string n, std::vector<std::string> applies = {}) {
            return OptionSpec{std::move(n), false, false, std::move(applies)};
        };
        std::vector<CommandSpec> s;
        s.push_back(
            {"schedule",
             {value("kind"), numeric("stages"), numeric("microbatches"), numeric("noam", {"pd"}),
              numeric("replicas", {"localsgd"}), numeric("local-steps", {"localsgd"}),
              numeric("flush-group", {"fill-drain"}), numeric("virtual-stages", {"interleaved"}),
              value("import"), value("export-csv"), numeric("forward-slots"),
              numeric("backward-slots"), numeric("weight-slots", {"zb-h1"}),
              numeric("latency-slots", {"pd", "fill-drain", "localsgd"}),
              flag("end-slot", {"pd", "fill-drain", "localsgd"}), flag("art"), flag("summary"),
              flag("json")},
             0,
             "",
             "kind",
             "--kind",
             {"pd", "fill-drain", "localsgd", "gpipe", "1f1b", "interleaved", "zb-h1"}});
        s.push_back({"delays",
                     {value("stages"), numeric("microbatches"), numeric("from"), flag("json")},
                     0,
                     "",
                     "",
                     "",
                     {}});
        s.push_back({"run",
                     {value("out"), flag("default"), value("backend"), value("device"),
                      numeric("threads"), value("step-rule"), value("budget-rule"), flag("figures"),
                      value("trace"), value("optimizer"), value("correctors"), flag("quiet")},
                     1,
                     "one config file (or --default)",
                     "",
                     "",
                     {}});
        s.push_back({"sweep",
                     {value("out"), flag("resume"), value("backend"), value("device"),
                      numeric("threads"), value("step-rule"), value("budget-rule"), flag("quiet")},
                     1,
                     "one sweep file",
                     "",
                     "",
                     {}});
        s.push_back(
            {"example",
             {},
             1,
             "one example name (default, compare, lm or a method key: pd, rpd, localsgd, sgd, "
             "fill-drain, 1f1b, zb-h1, 2bw, imported, interleaved)",
             "",
             "",
             {}});
        s.push_back({"devices", {flag("json")}, 0, "", "", "", {}});
        s.push_back({"reproduce",
                     {value("out"), flag("quick"), value("corpus", {"E5"}),
                      flag("paper-step", {"E5"}), value("protocol", {"E2", "E3", "E4", "all"}),
                      numeric("seeds", {"E2", "E4", "all"}), numeric("threads"), flag("quiet")},
                     1,
                     "one experiment: E1, E2, E3, E4, E5 or all",
                     "",
                     "experiment",
                     {"E1", "E2", "E3", "E4", "E5", "all"}});
        s.push_back({"study",
                     {value("out"), flag("quick"), numeric("seeds"), value("problem"),
                      numeric("threads"), flag("quiet")},
                     1,
                     "one study: staleness",
                     "",
                     "study",
                     {"staleness"}});
        s.push_back({"animate",
                     {value("out"), flag("default"), value("method"), value("slots"),
                      numeric("fps"), value("size"), value("panels"), value("budget-rule"),
                      numeric("threads"), flag("quiet")},
                     1,
                     "one config file (or --default)",
                     "",
                     "",
                     {}});
        return s;
    }();
    return specs;
}

const CommandSpec& commandSpec(const std::string& name) {
    for (const CommandSpec& s : commandSpecs()) {
        if (s.name == name) return s;
    }
    throw std::out_of_range("no command table named " + name);
}

}  // namespace pipelens::cmdline
