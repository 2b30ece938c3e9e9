#pragma once
// The training methods PipeLens compares, and the one table of what is keyed per method: the
// name used in configs, results and on the command line, the short and long labels the views
// show, and the slot schedule a pipeline method walks.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "schedule/timeline.hpp"

namespace pipelens {

enum class Method : std::uint8_t {
    PipeDream,
    RandomizedPipeDream,
    LocalSgd,
    Sgd,
    FillDrain,
    OneFOneB,
    ZeroBubbleH1,
    TwoBw,
    Imported,
    Interleaved
};

struct MethodInfo {
    Method method;
    std::string_view key;                  // configs, results and the CLI: "pd", "rpd", ...
    std::string_view shortLabel;           // compact views: "PD", "RPD", ...
    std::string_view description;          // method pickers: "PipeDream (1F1B, weight stashing)"
    std::optional<ScheduleKind> schedule;  // slot timeline walked; none for RPD (no slots)
    std::string_view aliases;              // other accepted spellings of `key` (space separated)
};

inline constexpr std::array<MethodInfo, 10> kMethods{{
    {Method::PipeDream, "pd", "PD", "PipeDream (1F1B, weight stashing)", ScheduleKind::PipeDream,
     "pipedream"},
    {Method::RandomizedPipeDream, "rpd", "RPD", "Randomized PipeDream", std::nullopt, ""},
    {Method::LocalSgd, "localsgd", "LSGD", "LocalSGD", ScheduleKind::LocalSgd, "local-sgd"},
    {Method::Sgd, "sgd", "SGD", "Sequential SGD", ScheduleKind::LocalSgd, ""},
    {Method::FillDrain, "fill-drain", "FD", "Fill-drain SGD (GPipe)", ScheduleKind::FillDrain,
     "filldrain gpipe"},
    {Method::OneFOneB, "1f1b", "1F1B", "1F1B with flush (PipeDream-Flush)", ScheduleKind::OneFOneB,
     "1f1b-flush pipedream-flush"},
    {Method::ZeroBubbleH1, "zb-h1", "ZB-H1", "Zero bubble ZB-H1 (split backward)",
     ScheduleKind::ZeroBubbleH1, "zero-bubble zbh1"},
    {Method::TwoBw, "2bw", "2BW", "PipeDream-2BW (two weight versions)", ScheduleKind::TwoBw,
     "pipedream-2bw"},
    {Method::Imported, "imported", "IMP", "Imported PyTorch schedule", ScheduleKind::Imported, ""},
    {Method::Interleaved, "interleaved", "INT", "Interleaved 1F1B (virtual stages)",
     ScheduleKind::Interleaved, "interleaved-1f1b vpp"},
}};

const MethodInfo& methodInfo(Method method);
inline std::string methodName(Method method) {
    return std::string(methodInfo(method).key);
}
// The method named `text` (its key, or with `aliases` also another spelling); nullopt if none.
std::optional<Method> findMethod(std::string_view text, bool aliases = false);
// As findMethod, but throws ConfigError naming `field`, the value and the allowed keys.
Method parseMethod(std::string_view text, const std::string& field = "method");
// "pd, rpd, localsgd, sgd, fill-drain": the keys in table order, for messages.
std::string methodKeyList();
// A schedule kind by the name of the method that walks it: "pd" / "fill-drain" / "localsgd"
// (or an alias of theirs; throws ConfigError otherwise). Its name: scheduleKindName.
ScheduleKind parseScheduleKind(const std::string& text);
// True for the methods that walk a slot timeline (everything but RPD).
inline bool isPipeline(Method method) {
    return methodInfo(method).schedule.has_value();
}

}  // namespace pipelens
