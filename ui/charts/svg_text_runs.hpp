#pragma once
// QSvgGenerator writes one <text> element per run of one script: "RPD δ=60" becomes "RPD " and
// "δ=60", each placed by Qt's own font metrics, and a viewer with other metrics draws them with
// a gap or an overlap. The exports join the runs of one line back into one element.
#include <QByteArray>

namespace pipelens::ui {

// Joins consecutive <text> elements of one group that lie on the same baseline, share their
// style and follow one another closely (the pieces of one line) into one element at the first
// one's position.
QByteArray joinSvgTextRuns(const QByteArray& svg);

}  // namespace pipelens::ui
