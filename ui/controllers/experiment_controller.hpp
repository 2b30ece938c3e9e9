#pragma once
// The one owner of the current ExperimentConfig. Every change goes through here: it is validated
// (the CLI's own rules), announced with configChanged, and, after a short debounce, the affected
// experiment is rerun on a worker thread. A newer change cancels the run in flight; results of an
// out-of-date run are dropped. Widgets only read the config and the snapshots.
#include <QObject>
#include <QString>
#include <QTimer>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "experiment/config/config.hpp"
#include "experiment/run/objective_cache.hpp"
#include "models/run_snapshot.hpp"
#include "util/worker_threads.hpp"

namespace pipelens::ui {

// Filled by the workers, emptied by the GUI thread's timer; guarded by its mutex, so the
// workers never wait for the GUI (they hold the lock only to append).
struct LiveBuffer {
    std::mutex mutex;
    std::uint64_t generation = 0;
    SnapshotPtr plan;
    struct Pending {
        bool reset = false;  // a new step size of a grid: the curve starts over
        QString name;
        double fraction = 0.0;
        double stepSize = 0.0;
        bool tuning = false;
        std::vector<QPointF> bySlot, byUpdate;
    };
    std::vector<Pending> pending;
    bool dirty = false;
};

class ExperimentController : public QObject {
    Q_OBJECT
  public:
    explicit ExperimentController(QObject* parent = nullptr);
    ~ExperimentController() override;  // cancels and joins every worker

    const ExperimentConfig& config() const { return config_; }

    // Replaces the whole config (validated first; throws ConfigError and keeps the old one).
    void setConfig(const ExperimentConfig& config);
    // Applies `change` to a copy; if the copy is valid it becomes the config and a rerun is
    // scheduled, and an empty string is returned. Otherwise the config is unchanged and the
    // engine's message (naming the field and what is allowed) is returned.
    QString tryModify(const std::function<void(ExperimentConfig&)>& change);

    // Parameters change -> rerun after this many milliseconds of quiet (default 30).
    void setDebounceMs(int ms) { debounce_.setInterval(ms); }
    int debounceMs() const { return debounce_.interval(); }

    void runNow();  // starts a run of the current config immediately
    // Shows a run made elsewhere (the command-line tool's, for its figures and animations) as
    // if this controller had run it: its config becomes the config (validated, as setConfig),
    // nothing is rerun, and resultsReady announces it. Throws ConfigError as setConfig.
    void adoptResult(ExperimentResult result, double seconds);
    void cancel();  // cancels the run in flight, if any
    bool running() const { return running_; }
    std::uint64_t generation() const { return generation_; }
    SnapshotPtr latest() const { return latest_; }

    // Live results of the run in flight (empty when none has arrived): the loss curves so far,
    // and the plan (timelines, no results) once the worker has made it. Refreshed at most every
    // liveIntervalMs (default 100) while a run is going; partialResults says when.
    const std::vector<LiveCurve>& liveCurves() const { return liveCurves_; }
    SnapshotPtr livePlan() const { return livePlan_; }
    double liveFraction() const;  // of the whole run, 0 … 1
    void setLiveIntervalMs(int ms) { liveTimer_.setInterval(ms); }
    // Points one publish hands over per curve at most (older ones are thinned, never blocked).
    static constexpr size_t kMaxLivePoints = 20000;

    // The whole config as one line of JSON (pasted back, restores the exact run, seed included),
    // and its inverse (throws ConfigError).
    QString configAsText() const;
    static ExperimentConfig configFromText(const QString& text);

    // The config without its view, normalized (ExperimentConfig::normalize) and checked by
    // ExperimentConfig::validate, the command-line tool's own check (throws ConfigError).
    static ExperimentConfig validated(const ExperimentConfig& config);

    // The current config as planned (schedule views only, RunSnapshot::planOnly), or null until
    // it is known: made at once on a change when the objective is cached (a change of S, γ or
    // a method), else as soon as the worker has planned.
    SnapshotPtr planned() const { return planned_; }
    // Workers not yet finished (a cancelled one counts until it has stopped).
    int workersInFlight() const;

  signals:
    void configChanged();
    // The schedule of the current config is known (planned()): the views that depend only on
    // it can show the new config before its run ends.
    void planReady(pipelens::ui::SnapshotPtr plan);
    void runStarted(quint64 generation);
    void resultsReady(pipelens::ui::SnapshotPtr snapshot);
    void partialResults(quint64 generation);
    void runFailed(quint64 generation, const QString& message);
    void notice(const QString& message);

  private:
    // A new config: the run in flight is out of date (cancelled now, not after the debounce),
    // and the new schedule is announced.
    void supersede();
    void announcePlan(SnapshotPtr plan);
    void pullLive();
    // Empties the live buffer and curves for `generation`: from then on, data of older runs is
    // dropped where it is published.
    void restartLive(std::uint64_t generation);
    // What a worker hands back to the GUI thread.
    struct WorkerOutcome {
        SnapshotPtr snapshot;  // null when the run failed or was cancelled
        QString error;
        QStringList notices;
    };
    // The worker's whole job for one run of `config` (on the worker's thread).
    WorkerOutcome runInWorker(const ExperimentConfig& config, std::uint64_t generation,
                              const std::shared_ptr<ObjectiveCache>& cache,
                              const SnapshotPtr& previous, const std::shared_ptr<LiveBuffer>& live,
                              const CancelFlag& cancel);
    void deliver(std::uint64_t generation, const SnapshotPtr& snapshot, const QString& error,
                 const QStringList& notices);

    ExperimentConfig config_;
    QTimer debounce_;
    std::uint64_t generation_ = 0;
    bool running_ = false;
    SnapshotPtr latest_;
    WorkerThreads workers_;
    std::shared_ptr<ObjectiveCache> cache_;  // shared with the workers
    std::shared_ptr<LiveBuffer> live_ = std::make_shared<LiveBuffer>();
    QTimer liveTimer_;
    std::vector<LiveCurve> liveCurves_;
    SnapshotPtr livePlan_;
    SnapshotPtr planned_;
};

// A planned-only snapshot (schedule views, no results) of `planned` for `generation`.
SnapshotPtr plannedSnapshot(ExperimentResult planned, std::uint64_t generation);

}  // namespace pipelens::ui
