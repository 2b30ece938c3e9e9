#pragma once
// A legend that wraps: each entry is a short sample of its line (the series' own pen: colour,
// width and dash) and its full name, laid out left to right and onto as many rows as the width
// needs, so no name is ever elided (Qt Charts' own legend elides in narrow panels).
#include <QList>
#include <QPen>
#include <QString>
#include <QWidget>

namespace pipelens::ui {

class LineLegend : public QWidget {
    Q_OBJECT
  public:
    struct Entry {
        QPen pen;
        QString name;
    };

    explicit LineLegend(QWidget* parent = nullptr);

    void setEntries(const QList<Entry>& entries);
    const QList<Entry>& entries() const { return entries_; }
    // Where each entry is drawn at the current width (its sample and name), for tests.
    QList<QRect> entryRects() const { return layoutAt(width()); }

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    QList<QRect> layoutAt(int width) const;

    QList<Entry> entries_;
};

// A panel in the chart background colour holding `chart` over `legend`: what a chart with a
// LineLegend shows, and what its PNG and SVG exports draw.
QWidget* chartWithLegend(QWidget* chart, LineLegend* legend, QWidget* parent);

}  // namespace pipelens::ui
