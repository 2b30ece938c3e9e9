#include "samples_view.hpp"

#include <QLabel>
#include <QScrollBar>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace pipelens::ui {

SamplesView::SamplesView(QWidget* parent) : QWidget(parent) {
    setObjectName("samplesView");
    heading_ = new QLabel(this);
    heading_->setWordWrap(true);
    heading_->setStyleSheet("color: #555;");
    browser_ = new QTextBrowser(this);
    browser_->setToolTip(
        tr("Text drawn character by character from each method's final model "
           "(line l of every method uses the same seed)"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    layout->addWidget(heading_);
    layout->addWidget(browser_, 1);
    setSnapshot(nullptr);
}

void SamplesView::setComputing() {
    computing_ = true;
    snapshot_.reset();
    heading_->setText(tr("computing… the samples appear when the run ends"));
    browser_->clear();
}

void SamplesView::setFailed() {
    computing_ = false;
    snapshot_.reset();
    heading_->setText(tr("No samples: the run failed (the status bar says why)"));
    browser_->clear();
}

QString SamplesView::heading() const {
    return heading_->text();
}

void SamplesView::setSnapshot(SnapshotPtr snapshot) {
    computing_ = false;
    snapshot_ = std::move(snapshot);
    browser_->clear();
    if (!snapshot_ || !snapshot_->lmProblem()) {
        heading_->setText(snapshot_ ? tr("No samples: text is sampled from the language model "
                                         "only")
                                    : tr("No run yet"));
        return;
    }
    const RunSnapshot& s = *snapshot_;
    const int vocabulary = s.lmProblem()->corpus.vocabSize();
    const auto& spec = *s.experiment.config.objective.languageModel;
    heading_->setText(
        tr("%n line(s) of %1 characters per method, temperature %2; line l uses seed %3 + l for "
           "every method. A uniform guess scores log V = %4 nats (V = %5).",
           nullptr, spec.sampleLines)
            .arg(spec.sampleLength)
            .arg(spec.sampleTemperature)
            .arg(s.experiment.config.seed)
            .arg(std::log(static_cast<double>(std::max(1, vocabulary))), 0, 'f', 2)
            .arg(vocabulary));
    render();
}

int SamplesView::columnsThatFit() const {
    const int methods = snapshot_ ? static_cast<int>(snapshot_->runs().size()) : 1;
    return std::clamp(browser_->viewport()->width() / 150, 1, std::max(1, methods));
}

void SamplesView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (snapshot_ && snapshot_->lmProblem() && columnsThatFit() != columns_) render();
}

void SamplesView::render() {
    const RunSnapshot& s = *snapshot_;
    columns_ = columnsThatFit();
    const size_t perRow = static_cast<size_t>(columns_);
    QString html = QStringLiteral("<table width=\"100%\" cellspacing=\"4\" cellpadding=\"4\">");
    for (size_t first = 0; first < s.runs().size(); first += perRow) {
        const size_t end = std::min(s.runs().size(), first + perRow);
        html += QStringLiteral("<tr>");
        for (size_t i = first; i < end; ++i) {
            const double loss = lmOf(s.runs()[i]).finalLoss;
            html += QStringLiteral(
                        "<th align=\"left\" valign=\"top\">%1<br><span style=\""
                        "font-weight: normal; color:#555\">%2</span></th>")
                        .arg(s.label(i).toHtmlEscaped(),
                             std::isfinite(loss) ? tr("final loss %1").arg(loss, 0, 'f', 3)
                                                 : tr("diverged"));
        }
        html += QStringLiteral("</tr><tr>");
        html += cells(first, end);
        html += QStringLiteral("</tr>");
    }
    html += QStringLiteral("</table>");
    const int scroll = browser_->verticalScrollBar()->value();
    browser_->setHtml(html);
    browser_->verticalScrollBar()->setValue(scroll);
}

QString SamplesView::cells(size_t first, size_t end) const {
    QString html;
    for (size_t i = first; i < end; ++i) {
        html += QStringLiteral("<td valign=\"top\" style=\"background:#f4f4f4\">");
        const auto& lines = lmOf(snapshot_->runs()[i]).samples;
        if (lines.empty()) html += tr("<i>no text (the weights are not finite)</i>");
        for (size_t l = 0; l < lines.size(); ++l) {
            const QString line = QString::fromStdString(lines[l]).toHtmlEscaped();
            html +=
                QStringLiteral("<p style=\"font-family: monospace; white-space: pre-wrap\">%1</p>")
                    .arg(line);
        }
        html += QStringLiteral("</td>");
    }
    return html;
}

QString SamplesView::text() const {
    return heading_->text() + QStringLiteral("\n") + browser_->toPlainText();
}

}  // namespace pipelens::ui
