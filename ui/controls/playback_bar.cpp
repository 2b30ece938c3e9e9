#include "controls/playback_bar.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QStyle>
#include <QToolButton>
#include <algorithm>
#include <cmath>

namespace pipelens::ui {
namespace {

constexpr int kTicksPerSecond = 30;

QToolButton* button(QWidget* parent, QStyle::StandardPixmap icon, const QString& tip) {
    auto* b = new QToolButton(parent);
    b->setIcon(parent->style()->standardIcon(icon));
    b->setToolTip(tip);
    b->setAutoRaise(true);
    return b;
}

}  // namespace

PlaybackBar::PlaybackBar(QWidget* parent) : QWidget(parent) {
    start_ = button(this, QStyle::SP_MediaSkipBackward, tr("To the start (Ctrl+Home)"));
    back_ = button(this, QStyle::SP_MediaSeekBackward, tr("Back one slot (Ctrl+Left)"));
    play_ = button(this, QStyle::SP_MediaPlay, tr("Play / pause (Ctrl+Space)"));
    step_ = button(this, QStyle::SP_MediaSeekForward, tr("Step one slot (Ctrl+Right)"));
    end_ = button(this, QStyle::SP_MediaSkipForward, tr("To the end (Ctrl+End)"));
    speed_ = new QComboBox(this);
    for (double s : {1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0}) {
        speed_->addItem(s == 1.0 ? tr("1 slot/s") : tr("%1 slots/s").arg(s), s);
    }
    speed_->setCurrentIndex(4);
    speed_->setToolTip(tr("Playback speed in simulated slots per second"));
    scrub_ = new QSlider(Qt::Horizontal, this);
    scrub_->setToolTip(
        tr("Scrub through the run: the Gantt chart, the heatmap and the curves "
           "show the state after this many slots"));
    position_ = new QLabel(this);
    position_->setMinimumWidth(150);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(2, 0, 2, 0);
    for (QWidget* w :
         {static_cast<QWidget*>(start_), static_cast<QWidget*>(back_), static_cast<QWidget*>(play_),
          static_cast<QWidget*>(step_), static_cast<QWidget*>(end_)}) {
        layout->addWidget(w);
    }
    layout->addWidget(speed_);
    layout->addWidget(scrub_, 1);
    layout->addWidget(position_);

    timer_.setInterval(1000 / kTicksPerSecond);
    connect(&timer_, &QTimer::timeout, this, &PlaybackBar::tick);
    connect(start_, &QToolButton::clicked, this, &PlaybackBar::toStart);
    connect(back_, &QToolButton::clicked, this, &PlaybackBar::stepBack);
    connect(play_, &QToolButton::clicked, this, &PlaybackBar::togglePlay);
    connect(step_, &QToolButton::clicked, this, &PlaybackBar::stepForward);
    connect(end_, &QToolButton::clicked, this, &PlaybackBar::toEnd);
    connect(scrub_, &QSlider::valueChanged, this, &PlaybackBar::setCursor);
    refresh();
}

double PlaybackBar::slotsPerSecond() const {
    return speed_->currentData().toDouble();
}

void PlaybackBar::setSlotsPerSecond(double speed) {
    int best = 0;
    for (int i = 1; i < speed_->count(); ++i) {
        if (std::abs(std::log(speed_->itemData(i).toDouble() / speed)) <
            std::abs(std::log(speed_->itemData(best).toDouble() / speed))) {
            best = i;
        }
    }
    speed_->setCurrentIndex(best);
}

void PlaybackBar::setTotalSlots(int totalSlots, bool toEnd) {
    total_ = std::max(0, totalSlots);
    {
        const QSignalBlocker block(scrub_);
        scrub_->setRange(0, total_);
        scrub_->setPageStep(std::max(1, total_ / 20));
    }
    const int target = toEnd ? total_ : std::min(cursor_, total_);
    cursor_ = -1;  // force the signal: the data behind the cursor changed
    setCursor(target);
}

void PlaybackBar::setCursor(int slot) {
    slot = std::clamp(slot, 0, total_);
    if (slot == cursor_) return;
    cursor_ = slot;
    refresh();
    emit cursorChanged(cursor_);
}

void PlaybackBar::play() {
    if (total_ == 0 || timer_.isActive()) return;
    if (cursor_ >= total_) setCursor(0);  // replay from the start
    carry_ = 0.0;
    timer_.start();
    refresh();
    emit playingChanged(true);
}

void PlaybackBar::pause() {
    if (!timer_.isActive()) return;
    timer_.stop();
    refresh();
    emit playingChanged(false);
}

void PlaybackBar::togglePlay() {
    playing() ? pause() : play();
}

void PlaybackBar::stepForward() {
    pause();
    setCursor(cursor_ + 1);
}

void PlaybackBar::stepBack() {
    pause();
    setCursor(cursor_ - 1);
}

void PlaybackBar::toStart() {
    pause();
    setCursor(0);
}

void PlaybackBar::toEnd() {
    pause();
    setCursor(total_);
}

void PlaybackBar::tick() {
    carry_ += slotsPerSecond() / kTicksPerSecond;
    const int whole = static_cast<int>(carry_);
    if (whole == 0) return;
    carry_ -= whole;
    setCursor(cursor_ + whole);
    if (cursor_ >= total_) pause();
}

void PlaybackBar::refresh() {
    {
        const QSignalBlocker block(scrub_);
        scrub_->setValue(cursor_);
    }
    play_->setIcon(style()->standardIcon(playing() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    position_->setText(tr("slot %1 / %2").arg(cursor_).arg(total_));
}

}  // namespace pipelens::ui
