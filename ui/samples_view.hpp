#pragma once
// Text sampled from each method's final model, side by side (one column per method, in config
// order, headed by the method and its final loss; in a narrow tab the columns that do not fit
// about 150 px each go on the next rows). Line l of every method is drawn with the same
// seed (the experiment's seed + l), so the columns differ only by the trained weights. While a
// run is in flight it says so and shows no earlier run's text.
#include <QString>
#include <QWidget>

#include "models/run_snapshot.hpp"

class QLabel;
class QTextBrowser;

namespace pipelens::ui {

class SamplesView : public QWidget {
    Q_OBJECT
  public:
    explicit SamplesView(QWidget* parent = nullptr);

    // A finished language-model run's samples (another snapshot: "no samples" says why).
    void setSnapshot(SnapshotPtr snapshot);
    // A new run is computing: the old samples go.
    void setComputing();
    bool computing() const { return computing_; }
    // The run that was computing failed: no samples, and the heading says so.
    void setFailed();
    QString heading() const;
    SnapshotPtr snapshot() const { return snapshot_; }

    // The text shown (plain), for tests: every method's label and lines.
    QString text() const;
    QTextBrowser* browser() const { return browser_; }

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    // Methods side by side as far as about 150 px each fit; the rest go on the next rows.
    int columnsThatFit() const;
    void render();
    QString cells(size_t first, size_t end) const;  // the text of methods [first, end)

    SnapshotPtr snapshot_;
    int columns_ = 0;  // per row, as last rendered
    bool computing_ = false;
    QLabel* heading_;
    QTextBrowser* browser_;
};

}  // namespace pipelens::ui
