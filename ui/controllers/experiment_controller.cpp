#include "controllers/experiment_controller.hpp"

#include <QMetaObject>
#include <QStringList>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "backend_select.hpp"
#include "errors.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "models/screen_labels.hpp"

namespace pipelens::ui {
namespace {

// Keeps at most `limit` of `points` (every n-th and the last): bounded work per publish.
void appendThinned(std::vector<QPointF>& out, std::vector<QPointF>&& fresh, size_t limit) {
    if (fresh.size() <= limit) {
        out.insert(out.end(), fresh.begin(), fresh.end());
        return;
    }
    const size_t stride = (fresh.size() + limit - 1) / limit;
    for (size_t i = 0; i < fresh.size(); i += stride) out.push_back(fresh[i]);
    if ((fresh.size() - 1) % stride != 0) out.push_back(fresh.back());
}

// Halves a pending curve the GUI has not taken yet, so it stays bounded if the GUI lags.
void halve(std::vector<QPointF>& v) {
    size_t j = 0;
    for (size_t i = 0; i < v.size(); i += 2) v[j++] = v[i];
    if (v.size() % 2 == 0 && !v.empty()) v[j++] = v.back();
    v.resize(j);
}

// Worker-side state of one method's publishing (touched only by that method's thread).
struct PublishCursor {
    CurveProgress sent;
    int gridIndex = -1;  // the grid point being published; a new one starts the curve over
    std::chrono::steady_clock::time_point last{};
};

// Worker side of one run's live curves: the plan's views (slots of each update) first, then
// every ~100 ms per method the new part of its objective series, bounded, into the live buffer.
// `chunk` is called from every method's thread, each touching only its own cursor.
class LivePublisher {
  public:
    LivePublisher(std::shared_ptr<LiveBuffer> live, std::uint64_t generation,
                  std::function<void(const SnapshotPtr&)> announce)
        : live_(std::move(live)), generation_(generation), announce_(std::move(announce)) {}

    void planned(const ExperimentResult& planned) {
        ExperimentResult views = planned;  // the plans, no results yet
        fillPlannedViews(views);
        plan_ = plannedSnapshot(std::move(views), generation_);
        cursors_.assign(planned.methods.size(), PublishCursor{});
        announce_(plan_);
        std::lock_guard<std::mutex> lock(live_->mutex);
        if (live_->generation != generation_) return;
        live_->plan = plan_;
        live_->pending.assign(cursors_.size(), LiveBuffer::Pending{});
        live_->dirty = true;
    }

    void chunk(const ChunkPosition& at, const RunResult& r) {
        const size_t i = at.method;
        PublishCursor& c = cursors_[i];
        const auto now = std::chrono::steady_clock::now();
        const bool restart = at.gridIndex != c.gridIndex;
        const bool recent = now - c.last < std::chrono::milliseconds(100);
        if (!restart && at.fraction < 1.0 && recent) return;
        c.last = now;
        if (restart) {
            c = PublishCursor{};
            c.gridIndex = at.gridIndex;
            c.last = now;
        }
        const MethodRun& run = plan_->runs()[i];
        CurvePoints fresh;
        appendLossPoints(r, run, c.sent, fresh);
        std::lock_guard<std::mutex> lock(live_->mutex);
        if (live_->generation != generation_ || i >= live_->pending.size()) return;
        LiveBuffer::Pending& p = live_->pending[i];
        if (restart) {
            p.bySlot.clear();
            p.byUpdate.clear();
            p.reset = true;
        }
        p.name = QStringLiteral("%1, γ=%2%3")
                     .arg(QString::fromStdString(run.label))
                     .arg(r.stepSize, 0, 'g', 3)
                     .arg(run.spec.step.grid ? ExperimentController::tr(" (tuning γ)") : QString());
        p.stepSize = r.stepSize;
        p.tuning = run.spec.step.grid;
        p.fraction = std::clamp(at.methodFraction(), 0.0, 1.0);
        appendThinned(p.bySlot, std::move(fresh.bySlot), ExperimentController::kMaxLivePoints);
        appendThinned(p.byUpdate, std::move(fresh.byUpdate), ExperimentController::kMaxLivePoints);
        while (p.bySlot.size() > 3 * ExperimentController::kMaxLivePoints) halve(p.bySlot);
        while (p.byUpdate.size() > 3 * ExperimentController::kMaxLivePoints) halve(p.byUpdate);
        live_->dirty = true;
    }

  private:
    std::shared_ptr<LiveBuffer> live_;
    std::uint64_t generation_;
    std::function<void(const SnapshotPtr&)> announce_;
    SnapshotPtr plan_;
    std::vector<PublishCursor> cursors_;
};

}  // namespace

ExperimentController::ExperimentController(QObject* parent) : QObject(parent) {
    qRegisterMetaType<SnapshotPtr>("pipelens::ui::SnapshotPtr");
    config_ = defaultExperiment();
    cache_ = std::make_shared<ObjectiveCache>();
    debounce_.setSingleShot(true);
    debounce_.setInterval(30);
    connect(&debounce_, &QTimer::timeout, this, &ExperimentController::runNow);
    liveTimer_.setInterval(100);
    connect(&liveTimer_, &QTimer::timeout, this, &ExperimentController::pullLive);
}

double ExperimentController::liveFraction() const {
    if (liveCurves_.empty()) return 0.0;
    double sum = 0.0;
    for (const LiveCurve& c : liveCurves_) sum += c.fraction;
    const size_t methods = livePlan_ ? livePlan_->runs().size() : liveCurves_.size();
    return sum / static_cast<double>(std::max<size_t>(1, methods));
}

void ExperimentController::pullLive() {
    SnapshotPtr plan;
    std::vector<LiveBuffer::Pending> pending;
    {
        std::lock_guard<std::mutex> lock(live_->mutex);
        if (live_->generation != generation_ || !live_->dirty) return;
        plan = live_->plan;
        pending.swap(live_->pending);
        live_->pending.resize(pending.size());
        live_->dirty = false;
    }
    livePlan_ = plan;
    if (liveCurves_.size() < pending.size()) liveCurves_.resize(pending.size());
    for (size_t i = 0; i < pending.size(); ++i) {
        LiveCurve& c = liveCurves_[i];
        LiveBuffer::Pending& p = pending[i];
        c.method = static_cast<int>(i);
        if (p.name.isEmpty()) continue;  // nothing new for this method
        if (p.reset) {
            c.bySlot.clear();
            c.byUpdate.clear();
        }
        c.name = p.name;
        c.fraction = p.fraction;
        c.stepSize = p.stepSize;
        c.tuning = p.tuning;
        c.bySlot.insert(c.bySlot.end(), p.bySlot.begin(), p.bySlot.end());
        c.byUpdate.insert(c.byUpdate.end(), p.byUpdate.begin(), p.byUpdate.end());
    }
    emit partialResults(generation_);
}

ExperimentController::~ExperimentController() {
    workers_.stopAll();
}

ExperimentConfig ExperimentController::validated(const ExperimentConfig& config) {
    ExperimentConfig checked = config;
    checked.view.reset();  // the window's (MainWindow applies it): a view change is no new run
    checked.normalize();   // what the choices leave unused is no change
    checked.validate();    // the one check, in core, as for a file
    return checked;
}

SnapshotPtr plannedSnapshot(ExperimentResult planned, std::uint64_t generation) {
    auto s = std::make_shared<RunSnapshot>();
    s->generation = generation;
    s->planOnly = true;
    s->experiment = std::move(planned);
    deriveRunViews(*s);
    return s;
}

int ExperimentController::workersInFlight() const {
    return workers_.inFlight();
}

void ExperimentController::supersede() {
    workers_.cancelAll();
    ++generation_;    // a result still on its way is dropped in deliver
    running_ = true;  // the new config's run is due (after the debounce)
    liveTimer_.stop();
    restartLive(generation_);
    planned_.reset();
    emit configChanged();
    // With the objective at hand the plan costs milliseconds (S = 150 included): show it now.
    // (The language model's plan needs its corpus: it comes from the worker.)
    if (auto objective = config_.languageModel() ? nullptr : cache_->peek(config_)) {
        try {
            announcePlan(plannedSnapshot(plannedViews(config_, *objective), generation_));
        } catch (const std::exception&) {
            // The worker reports the same error for this config.
        }
    }
    debounce_.start();
}

void ExperimentController::adoptResult(ExperimentResult result, double seconds) {
    setConfig(result.config);
    debounce_.stop();         // the run setConfig scheduled is this one, already made
    result.config = config_;  // as a run of this controller's would carry it (normalized)
    auto s = std::make_shared<RunSnapshot>();
    s->generation = generation_;
    s->experiment = std::move(result);
    s->seconds = seconds;
    deriveRunViews(*s);
    deliver(generation_, s, {}, {});
}

void ExperimentController::announcePlan(SnapshotPtr plan) {
    planned_ = std::move(plan);
    emit planReady(planned_);
}

void ExperimentController::setConfig(const ExperimentConfig& config) {
    config_ = validated(config);
    supersede();
}

QString ExperimentController::tryModify(const std::function<void(ExperimentConfig&)>& change) {
    ExperimentConfig copy = config_;
    try {
        change(copy);
        copy = validated(copy);
    } catch (const std::exception& e) {
        // Shown under a control: with the labels on screen, not the config's keys.
        return withScreenLabels(QString::fromStdString(e.what()), copy);
    }
    if (copy == config_) return {};
    config_ = std::move(copy);
    supersede();
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
    // The core reader bounds nesting and refuses duplicate keys, as for config files.
    return ExperimentConfig::fromText(text.trimmed().toStdString(),
                                      "the text (a PipeLens configuration in JSON)");
}

void ExperimentController::cancel() {
    workers_.cancelAll();
    if (running_) {
        running_ = false;
        ++generation_;  // whatever is in flight is now out of date
    }
    liveTimer_.stop();
    liveCurves_.clear();
    livePlan_.reset();
}

void ExperimentController::restartLive(std::uint64_t generation) {
    {
        std::lock_guard<std::mutex> lock(live_->mutex);
        live_->generation = generation;
        live_->plan.reset();
        live_->pending.clear();
        live_->dirty = false;
    }
    liveCurves_.clear();
    livePlan_.reset();
}

void ExperimentController::runNow() {
    debounce_.stop();
    workers_.cancelAll();
    workers_.reapFinished();
    const std::uint64_t generation = ++generation_;
    running_ = true;
    restartLive(generation);
    liveTimer_.start();
    emit runStarted(generation);

    workers_.start([this, config = config_, generation, cache = cache_, previous = latest_,
                    live = live_](const CancelFlag& cancel) {
        WorkerOutcome out = runInWorker(config, generation, cache, previous, live, cancel);
        if (!cancel->load()) {
            // Queued onto the GUI thread; dropped there if a newer run started meanwhile.
            QMetaObject::invokeMethod(
                this,
                [this, generation, out = std::move(out)] {
                    deliver(generation, out.snapshot, out.error, out.notices);
                },
                Qt::QueuedConnection);
        }
    });
}

ExperimentController::WorkerOutcome ExperimentController::runInWorker(
    const ExperimentConfig& config, std::uint64_t generation,
    const std::shared_ptr<ObjectiveCache>& cache, const SnapshotPtr& previous,
    const std::shared_ptr<LiveBuffer>& live, const CancelFlag& cancel) {
    WorkerOutcome out;
    try {
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::string> lines;
        // Fallbacks that happen mid-run are reported from the worker: queue them over.
        auto runtimeNotice = [this](const std::string& line) {
            QMetaObject::invokeMethod(
                this, [this, text = QString::fromStdString(line)] { emit notice(text); },
                Qt::QueuedConnection);
        };
        // The engine the config's backend picks, for either objective, as the CLI does.
        RunOptions options;
        chooseEngine(config, options, lines, runtimeNotice);
        for (const auto& l : lines) out.notices << QString::fromStdString(l);
        options.cancel = cancel.get();
        // The plan made on the worker (the objective was not cached): sent over at once.
        LivePublisher publisher(live, generation, [this, generation](const SnapshotPtr& made) {
            QMetaObject::invokeMethod(
                this,
                [this, generation, made] {
                    if (generation == generation_ && !planned_) announcePlan(made);
                },
                Qt::QueuedConnection);
        });
        options.onPlanned = [&](const ExperimentResult& planned) { publisher.planned(planned); };
        options.onChunk = [&](const ChunkPosition& at, const RunResult& r) {
            publisher.chunk(at, r);
        };
        // Every method on its own thread, so all live curves grow side by side; cores left
        // over split the language model's stages (one method alone gets them all).
        options.threads = static_cast<int>(
            std::max<size_t>({1, config.methods.size(), std::thread::hardware_concurrency()}));
        options.objectives = cache.get();
        options.previous = previous ? &previous->experiment : nullptr;
        auto s = std::make_shared<RunSnapshot>();
        s->generation = generation;
        s->experiment = runExperiment(config, options);
        s->experiment.notices.insert(s->experiment.notices.end(), lines.begin(), lines.end());
        if (!s->experiment.cancelled) {
            deriveRunViews(*s);
            s->seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            out.snapshot = std::move(s);
        }
    } catch (const std::exception& e) {
        out.error = QString::fromStdString(e.what());
    }
    return out;
}

void ExperimentController::deliver(std::uint64_t generation, const SnapshotPtr& snapshot,
                                   const QString& error, const QStringList& notices) {
    workers_.reapFinished();
    if (generation != generation_) return;  // out of date
    running_ = false;
    liveTimer_.stop();
    liveCurves_.clear();
    livePlan_.reset();
    for (const QString& n : notices) emit notice(n);
    if (!snapshot) {
        emit runFailed(generation, error.isEmpty() ? tr("the run was cancelled") : error);
        return;
    }
    latest_ = snapshot;
    emit resultsReady(snapshot);
}

}  // namespace pipelens::ui
