#include "svg_text_runs.hpp"

#include <QRegularExpression>
#include <QString>

namespace pipelens::ui {
namespace {

struct TextRun {
    QString attributes;  // without x
    QString x;
    QString content;
};

TextRun parseRun(const QRegularExpressionMatch& m) {
    static const QRegularExpression xAttribute(QStringLiteral(R"re( x="([^"]*)")re"));
    TextRun run;
    run.attributes = m.captured(1);
    const QRegularExpressionMatch x = xAttribute.match(run.attributes);
    if (x.hasMatch()) {
        run.x = x.captured(1);
        run.attributes.remove(x.capturedStart(0), x.capturedLength(0));
    }
    run.content = m.captured(2);
    return run;
}

// The runs of one group, joined where they continue one another.
QString joinGroup(const QString& body) {
    static const QRegularExpression text(QStringLiteral(R"re(<text([^>]*)>([^<]*)</text>)re"));
    QList<TextRun> runs;
    for (auto it = text.globalMatch(body); it.hasNext();) {
        const TextRun run = parseRun(it.next());
        // Same baseline (y is among the attributes) and same style: one line of one call.
        if (!runs.isEmpty() && runs.back().attributes == run.attributes) {
            runs.back().content += run.content;
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
