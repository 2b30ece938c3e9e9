#include "method.hpp"

#include "errors.hpp"

namespace pipelens {

const MethodInfo& methodInfo(Method method) {
    for (const MethodInfo& m : kMethods) {
        if (m.method == method) return m;
    }
    throw std::logic_error("methodInfo: a Method without a row in kMethods");
}

std::optional<Method> findMethod(std::string_view text, bool aliases) {
    for (const MethodInfo& m : kMethods) {
        if (text == m.key) return m.method;
        if (!aliases) continue;
        std::string_view rest = m.aliases;
        while (!rest.empty()) {
            const size_t space = rest.find(' ');
            if (rest.substr(0, space) == text) return m.method;
            rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
        }
    }
    return std::nullopt;
}

Method parseMethod(std::string_view text, const std::string& field) {
    if (auto m = findMethod(text)) return *m;
    throw ConfigError(field + " = \"" + std::string(text) + "\" is not allowed: one of " +
                      methodKeyList());
}

std::string methodKeyList() {
    std::string out;
    for (const MethodInfo& m : kMethods) out += (out.empty() ? "" : ", ") + std::string(m.key);
    return out;
}

ScheduleKind parseScheduleKind(const std::string& text) {
    // The pipeline methods that name a schedule of their own (sgd is LocalSGD with R = 1).
    if (auto m = findMethod(text, true)) {
        const auto kind = methodInfo(*m).schedule;
        if (kind && scheduleKindName(*kind) == methodInfo(*m).key) return *kind;
    }
    std::string keys;
    for (const auto& k : kScheduleKinds) keys += (keys.empty() ? "" : ", ") + std::string(k.name);
    throw ConfigError("kind = \"" + text + "\" is not allowed: one of " + keys);
}

}  // namespace pipelens
