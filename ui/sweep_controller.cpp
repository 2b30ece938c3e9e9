#include "sweep_controller.hpp"

#include <QMetaObject>

namespace pipelens::ui {

SweepController::SweepController(QObject* parent) : QObject(parent) {}

SweepController::~SweepController() {
    for (Worker& w : workers_) w.cancel->store(true);
    for (Worker& w : workers_) {
        if (w.thread.joinable()) w.thread.join();
    }
}

std::size_t SweepController::pointsDone() const {
    std::size_t n = 0;
    for (const auto& p : points_) n += p ? 1 : 0;
    return n;
}

void SweepController::reap() {
    for (auto it = workers_.begin(); it != workers_.end();) {
        if (it->done->load()) {
            it->thread.join();
            it = workers_.erase(it);
        } else {
            ++it;
        }
    }
}

void SweepController::start(const SweepSpec& spec) {
    for (Worker& w : workers_) w.cancel->store(true);
    reap();
    const quint64 generation = ++generation_;
    spec_ = spec;
    points_.assign(spec.points(), std::nullopt);
    progress_ = SweepProgress{};
    progress_.points = spec.points();
    error_.clear();
    state_ = State::Running;
    emit started();

    Worker w;
    w.cancel = std::make_shared<std::atomic<bool>>(false);
    w.done = std::make_shared<std::atomic<bool>>(false);
    w.thread = std::thread([this, spec, generation, cancel = w.cancel, done = w.done,
                            threads = threads_] {
        SweepRunOptions options;
        options.threads = threads;
        options.cancel = cancel.get();
        // Both hooks run on worker threads: hand copies to the GUI thread, which drops them
        // if a newer sweep started meanwhile.
        options.onPoint = [this, generation](const PointResult& point) {
            QMetaObject::invokeMethod(
                this,
                [this, generation, point] {
                    if (generation != generation_ || point.index >= points_.size()) return;
                    points_[point.index] = point;
                    emit pointFinished(static_cast<int>(point.index));
                },
                Qt::QueuedConnection);
        };
        options.onProgress = [this, generation](const SweepProgress& progress) {
            QMetaObject::invokeMethod(
                this,
                [this, generation, progress] {
                    if (generation != generation_) return;
                    progress_ = progress;
                    emit progressChanged();
                },
                Qt::QueuedConnection);
        };
        bool cancelled = false;
        QString error;
        try {
            cancelled = runSweep(spec, {}, options).cancelled;
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, generation, cancelled, error] { finish(generation, cancelled, error); },
            Qt::QueuedConnection);
        done->store(true);
    });
    workers_.push_back(std::move(w));
}

void SweepController::cancel() {
    if (!running()) return;
    for (Worker& w : workers_) w.cancel->store(true);
    state_ = State::Cancelling;
    emit progressChanged();
}

void SweepController::finish(quint64 generation, bool cancelled, const QString& error) {
    reap();
    if (generation != generation_) return;
    error_ = error;
    state_ = !error.isEmpty() ? State::Failed
             : cancelled || pointsDone() < points_.size() ? State::Cancelled
                                                          : State::Done;
    emit finished();
}

}  // namespace pipelens::ui
