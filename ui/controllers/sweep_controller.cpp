#include "controllers/sweep_controller.hpp"

#include <QMetaObject>

namespace pipelens::ui {

SweepController::SweepController(QObject* parent) : QObject(parent) {}

SweepController::~SweepController() {
    workers_.stopAll();
}

std::size_t SweepController::pointsDone() const {
    std::size_t n = 0;
    for (const auto& p : points_) n += p ? 1 : 0;
    return n;
}

void SweepController::start(const SweepSpec& spec) {
    workers_.cancelAll();
    workers_.reapFinished();
    const quint64 generation = ++generation_;
    spec_ = spec;
    points_.assign(spec.points(), std::nullopt);
    progress_ = SweepProgress{};
    progress_.points = spec.points();
    error_.clear();
    state_ = State::Running;
    emit started();

    workers_.start([this, spec, generation, threads = threads_](const CancelFlag& cancel) {
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
    });
}

void SweepController::cancel() {
    if (!running()) return;
    workers_.cancelAll();
    state_ = State::Cancelling;
    emit progressChanged();
}

void SweepController::finish(quint64 generation, bool cancelled, const QString& error) {
    workers_.reapFinished();
    if (generation != generation_) return;
    error_ = error;
    state_ = !error.isEmpty()                             ? State::Failed
             : cancelled || pointsDone() < points_.size() ? State::Cancelled
                                                          : State::Done;
    emit finished();
}

}  // namespace pipelens::ui
