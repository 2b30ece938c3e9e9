#include "controllers/presets.hpp"

#include <QFile>

#include "errors.hpp"

// Resources of a static library must be registered by hand (outside any namespace).
static void registerPipelensResources() {
    Q_INIT_RESOURCE(pipelens);
}

namespace pipelens::ui {
namespace {

struct Entry {
    const char* id = nullptr;
    const char* title = nullptr;
    SweepMetric metric = SweepMetric::FinalGap;  // for a sweep preset
};

constexpr Entry kPresets[] = {
    {"default", "Default: PD vs RPD vs LocalSGD (logistic, S = 8)"},
    {"e1-delays", "E1: PipeDream's delays (S² − S/2)"},
    {"e2-pd-vs-rpd", "E2: PipeDream vs Randomized PipeDream, sweep over δ"},
    {"e3-quadratic", "E3: PipeDream vs LocalSGD, tridiagonal quadratic (S = 16)"},
    {"e3-logistic", "E3: PipeDream vs LocalSGD, logistic regression (S = 16)"},
    {"e4-scaling", "E4: fixed-time scaling, sweep over S (logistic, σ = 0.5)",
     SweepMetric::FinalObjective},
    {"e5-language-model", "E5: a character language model, PD vs LocalSGD vs RPD (S = 4)"},
    {"schedules", "Which schedule wins? PD, GPipe, 1F1B, ZB-H1, 2BW (S = 4)"},
    {"prediction", "Can prediction fix PipeDream? PD with weight prediction, S = 8"},
};

QByteArray readResource(const QString& path) {
    static const bool registered = [] {
        registerPipelensResources();
        return true;
    }();
    (void)registered;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

const Entry* findEntry(const QString& id) {
    for (const Entry& e : kPresets) {
        if (id == QLatin1String(e.id)) return &e;
    }
    return nullptr;
}

}  // namespace

QStringList presetIds() {
    QStringList ids;
    for (const Entry& e : kPresets) ids << QString::fromLatin1(e.id);
    return ids;
}

QString presetTitle(const QString& id) {
    const Entry* e = findEntry(id);
    return e ? QString::fromUtf8(e->title) : id;
}

Preset loadPreset(const QString& id) {
    if (!presetIds().contains(id)) {
        throw ConfigError("preset \"" + id.toStdString() + "\" is not allowed: one of " +
                          presetIds().join(", ").toStdString());
    }
    const QByteArray json = readResource(QStringLiteral(":/presets/%1.json").arg(id));
    if (json.isEmpty()) {
        throw ConfigError("preset \"" + id.toStdString() + "\" is missing from the resources");
    }
    Preset p;
    p.id = id;
    p.title = presetTitle(id);
    p.lesson = QString::fromUtf8(readResource(QStringLiteral(":/lessons/%1.md").arg(id)));
    try {
        const nlohmann::json j = nlohmann::json::parse(json.toStdString());
        if (j.contains("axis")) {
            p.sweep = SweepSpec::fromJson(j);
            p.config = p.sweep->overlayConfig().value_or(p.sweep->pointConfig(0));
            p.metric = findEntry(id)->metric;
        } else {
            p.config = ExperimentConfig::fromJson(j);
        }
    } catch (const nlohmann::json::parse_error& e) {
        throw ConfigError("preset \"" + id.toStdString() + "\" is not valid JSON: " + e.what());
    }
    return p;
}

}  // namespace pipelens::ui
