#include "experiment_controller.hpp"

#include <QMetaObject>
#include <QStringList>
#include <chrono>
#include <filesystem>

#include "backend_select.hpp"
#include "errors.hpp"
#include "experiment_runner.hpp"

namespace pipelens::ui {

ExperimentController::ExperimentController(QObject* parent) : QObject(parent) {
    qRegisterMetaType<SnapshotPtr>("pipelens::ui::SnapshotPtr");
    config_ = defaultExperiment();
    cache_ = std::make_shared<ObjectiveCache>();
    debounce_.setSingleShot(true);
    debounce_.setInterval(30);
    connect(&debounce_, &QTimer::timeout, this, &ExperimentController::runNow);
}

ExperimentController::~ExperimentController() {
    for (Worker& w : workers_) w.cancel->store(true);
    for (Worker& w : workers_) {
        if (w.thread.joinable()) w.thread.join();
    }
}

ExperimentConfig ExperimentController::validated(const ExperimentConfig& config) {
    return ExperimentConfig::fromJson(config.toJson(), config.baseDir);
}

void ExperimentController::setConfig(const ExperimentConfig& config) {
    config_ = validated(config);
    emit configChanged();
    debounce_.start();
}

QString ExperimentController::tryModify(const std::function<void(ExperimentConfig&)>& change) {
    ExperimentConfig copy = config_;
    try {
        change(copy);
        copy = validated(copy);
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    if (copy.toJson() == config_.toJson()) return {};
    config_ = std::move(copy);
    emit configChanged();
    debounce_.start();
    return {};
}

QString ExperimentController::configAsText() const {
    ExperimentConfig c = config_;
    // Relative data paths only make sense next to a config file: make them absolute.
    auto absolute = [&](std::string& p) {
        if (p.empty() || c.baseDir.empty() || std::filesystem::path(p).is_absolute()) return;
        p = (std::filesystem::path(c.baseDir) / p).lexically_normal().string();
    };
    absolute(c.data.x);
    absolute(c.data.y);
    return QString::fromStdString(c.toJson().dump());
}

ExperimentConfig ExperimentController::configFromText(const QString& text) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text.trimmed().toStdString());
    } catch (const nlohmann::json::parse_error& e) {
        throw ConfigError(std::string("the text is not a PipeLens configuration (JSON): ") +
                          e.what());
    }
    return ExperimentConfig::fromJson(j);
}

void ExperimentController::reapFinishedWorkers() {
    for (auto it = workers_.begin(); it != workers_.end();) {
        if (it->finished->load()) {
            it->thread.join();
            it = workers_.erase(it);
        } else {
            ++it;
        }
    }
}

void ExperimentController::cancel() {
    for (Worker& w : workers_) w.cancel->store(true);
    if (running_) {
        running_ = false;
        ++generation_;  // whatever is in flight is now out of date
    }
}

void ExperimentController::runNow() {
    debounce_.stop();
    for (Worker& w : workers_) w.cancel->store(true);
    reapFinishedWorkers();
    const std::uint64_t generation = ++generation_;
    running_ = true;
    emit runStarted(generation);

    Worker w;
    w.cancel = std::make_shared<std::atomic<bool>>(false);
    w.finished = std::make_shared<std::atomic<bool>>(false);
    w.thread = std::thread([this, config = config_, generation, cancel = w.cancel, cache = cache_,
                            previous = latest_,
                            finished = w.finished] {
        SnapshotPtr snapshot;
        QString error;
        QStringList notices;
        try {
            const auto start = std::chrono::steady_clock::now();
            std::vector<std::string> lines;
            // Fallbacks that happen mid-run are reported from the worker: queue them over.
            auto runtimeNotice = [this](const std::string& line) {
                QMetaObject::invokeMethod(
                    this, [this, text = QString::fromStdString(line)] { emit notice(text); },
                    Qt::QueuedConnection);
            };
            BackendChoice backend = selectBackend(config, lines, runtimeNotice);
            for (const auto& l : lines) notices << QString::fromStdString(l);
            RunOptions options;
            options.backend = backend.provider;
            options.backendName = backend.name;
            options.cancel = cancel.get();
            auto s = std::make_shared<RunSnapshot>();
            s->generation = generation;
            s->experiment = runExperimentCached(config, options, *cache,
                                                previous ? &previous->experiment : nullptr);
            s->experiment.notices.insert(s->experiment.notices.end(), lines.begin(), lines.end());
            if (!s->experiment.cancelled) {
                deriveRunViews(*s);
                s->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                           start).count();
                snapshot = std::move(s);
            }
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        if (!cancel->load()) {
            // Queued onto the GUI thread; dropped there if a newer run started meanwhile.
            QMetaObject::invokeMethod(
                this, [this, generation, snapshot, error, notices] {
                    deliver(generation, snapshot, error, notices);
                },
                Qt::QueuedConnection);
        }
        finished->store(true);
    });
    workers_.push_back(std::move(w));
}

void ExperimentController::deliver(std::uint64_t generation, SnapshotPtr snapshot,
                                   const QString& error, const QStringList& notices) {
    reapFinishedWorkers();
    if (generation != generation_) return;  // out of date
    running_ = false;
    for (const QString& n : notices) emit notice(n);
    if (!snapshot) {
        emit runFailed(generation, error.isEmpty() ? tr("the run was cancelled") : error);
        return;
    }
    latest_ = snapshot;
    emit resultsReady(snapshot);
}

}  // namespace pipelens::ui
