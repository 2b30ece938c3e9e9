#pragma once
// Playback over a finished run: play, pause, step one slot, speed, scrub. The cursor counts
// slots done (0 … total); everything that shows the run (Gantt, heatmap, curves) follows it.
// A QTimer at 30 Hz advances the cursor by speed / 30 slots per tick.
#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QSlider;
class QToolButton;

namespace pipelens::ui {

class PlaybackBar : public QWidget {
    Q_OBJECT
  public:
    explicit PlaybackBar(QWidget* parent = nullptr);

    // A new run of `totalSlots` slots. A cursor past the end is clamped; `toEnd` moves it there.
    void setTotalSlots(int totalSlots, bool toEnd);
    int totalSlots() const { return total_; }
    int cursor() const { return cursor_; }
    bool playing() const { return timer_.isActive(); }
    double slotsPerSecond() const;
    void setSlotsPerSecond(double speed);  // picks the nearest listed speed

  public slots:
    void setCursor(int slot);
    void play();
    void pause();
    void togglePlay();
    void stepForward();
    void stepBack();
    void toStart();
    void toEnd();

  signals:
    void cursorChanged(int slot);
    void playingChanged(bool playing);

  private:
    void tick();
    void refresh();

    QToolButton* start_;
    QToolButton* back_;
    QToolButton* play_;
    QToolButton* step_;
    QToolButton* end_;
    QComboBox* speed_;
    QSlider* scrub_;
    QLabel* position_;
    QTimer timer_;
    int total_ = 0;
    int cursor_ = 0;
    double carry_ = 0.0;  // fractional slots not yet shown
};

}  // namespace pipelens::ui
