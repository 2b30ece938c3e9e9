#include "charts/svg_text_runs.hpp"

#include <QRegularExpression>
#include <QString>

namespace pipelens::ui {
namespace {

struct TextRun {
    QString attributes;  // without x
    QString x;
    QString content;
    double left = 0.0;          // x of the last piece joined
    qsizetype pieceLength = 0;  // characters of that piece
    double fontSize = 0.0;
};

TextRun parseRun(const QRegularExpressionMatch& m) {
    static const QRegularExpression xAttribute(QStringLiteral(R"re( x="([^"]*)")re"));
    static const QRegularExpression size(QStringLiteral(R"re( font-size="([^"]*)")re"));
    TextRun run;
    run.attributes = m.captured(1);
    const QRegularExpressionMatch x = xAttribute.match(run.attributes);
    if (x.hasMatch()) {
        run.x = x.captured(1);
        run.left = run.x.toDouble();
        run.attributes.remove(x.capturedStart(0), x.capturedLength(0));
    }
    run.fontSize = size.match(run.attributes).captured(1).toDouble();
    run.content = m.captured(2);
    run.pieceLength = run.content.size();
    return run;
}

// Whether `next` goes on where `run` ends: same baseline and style (y is among the attributes),
// and it starts after the last piece, no further than that piece's characters at an em each
// (labels apart on one baseline, such as an axis's ticks, are not joined).
bool continues(const TextRun& run, const TextRun& next) {
    if (run.attributes != next.attributes || run.x.isEmpty() || next.x.isEmpty()) return false;
    const double reach = static_cast<double>(run.pieceLength) * run.fontSize * 1.05;
    return next.left > run.left && next.left <= run.left + reach;
}

// The runs of one group, joined where they continue one another.
QString joinGroup(const QString& body) {
    static const QRegularExpression text(QStringLiteral(R"re(<text([^>]*)>([^<]*)</text>)re"));
    QList<TextRun> runs;
    for (auto it = text.globalMatch(body); it.hasNext();) {
        const TextRun run = parseRun(it.next());
        if (!runs.isEmpty() && continues(runs.back(), run)) {
            runs.back().content += run.content;
            runs.back().left = run.left;
            runs.back().pieceLength = run.pieceLength;
        } else {
            runs << run;
        }
    }
    QString out;
    for (const TextRun& run : runs) {
        QString attributes = run.attributes;
        if (!run.x.isEmpty()) {
            const qsizetype y = attributes.indexOf(QStringLiteral(" y="));
            attributes.insert(y < 0 ? 0 : y, " x=\"" + run.x + '"');
        }
        out += QStringLiteral("<text%1>%2</text>\n").arg(attributes, run.content);
    }
    return out;
}

}  // namespace

QByteArray joinSvgTextRuns(const QByteArray& svg) {
    // A group holding only text elements (and white space): what one drawText call writes.
    static const QRegularExpression group(
        QStringLiteral(R"re((<g [^>]*>\s*)((?:<text[^>]*>[^<]*</text>\s*){2,})(</g>))re"));
    const QString in = QString::fromUtf8(svg);
    QString out;
    out.reserve(in.size());
    qsizetype done = 0;
    for (auto it = group.globalMatch(in); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        out += QStringView(in).mid(done, m.capturedStart(2) - done);
        out += joinGroup(m.captured(2));
        done = m.capturedEnd(2);
    }
    out += QStringView(in).mid(done);
    return out.toUtf8();
}

}  // namespace pipelens::ui
