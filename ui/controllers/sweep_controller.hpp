#pragma once
// Runs one sweep at a time off the GUI thread with the engine's runSweep, and hands each point
// to the GUI thread as soon as it finishes, with the progress and the time left. Cancel stops
// between runs and keeps every point that finished. A new start drops whatever an older sweep
// still delivers (each delivery carries the generation it belongs to).
#include <QObject>
#include <QString>
#include <optional>

#include "experiment/sweep/sweep.hpp"
#include "util/worker_threads.hpp"

namespace pipelens::ui {

class SweepController : public QObject {
    Q_OBJECT
  public:
    enum class State { Empty, Running, Cancelling, Done, Cancelled, Failed };

    explicit SweepController(QObject* parent = nullptr);
    ~SweepController() override;  // cancels and joins every worker

    // Starts `spec` from nothing (an older sweep in flight is cancelled and its results
    // dropped). The spec must be valid (SweepSpec::fromJson checked it).
    void start(const SweepSpec& spec);
    void cancel();  // stops between runs; the finished points stay

    State state() const { return state_; }
    bool running() const { return state_ == State::Running || state_ == State::Cancelling; }
    // The sweep of the current results (none before the first start).
    const std::optional<SweepSpec>& spec() const { return spec_; }
    const SweepPoints& points() const { return points_; }
    std::size_t pointsDone() const;
    const SweepProgress& progress() const { return progress_; }
    QString error() const { return error_; }
    quint64 generation() const { return generation_; }
    // Worker threads of a sweep (0: one per core).
    void setThreads(int threads) { threads_ = threads; }

  signals:
    void started();
    void pointFinished(int index);
    void progressChanged();
    void finished();  // Done, Cancelled or Failed (see state())

  private:
    void finish(quint64 generation, bool cancelled, const QString& error);

    State state_ = State::Empty;
    std::optional<SweepSpec> spec_;
    SweepPoints points_;
    SweepProgress progress_;
    QString error_;
    quint64 generation_ = 0;
    int threads_ = 0;
    WorkerThreads workers_;
};

}  // namespace pipelens::ui
