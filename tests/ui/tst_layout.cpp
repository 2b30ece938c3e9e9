// The window at 1024 × 700 and at 1600 × 1000 in every state a person meets (the default run, a
// LocalSGD or an RPD entry selected, each preset, S = 64 and 128, a diverged run, the language
// model chosen in the panel, the optimizer and corrector picker filled in) hides nothing:
// every visible widget lies inside its parent (only a scroll area's content may scroll), no field
// is squeezed below its minimum, every label's text fits (or is elided on purpose with the whole
// text as tooltip), no chart cuts a title, legend name, axis label or statistics line short, and
// γ shows without scrolling at the default size.
// An error message does not move the other controls.
#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QAction>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDockWidget>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMainWindow>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/range_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controls/controls_panel.hpp"
#include "controls/log_slider.hpp"
#include "controls/method_list_editor.hpp"
#include "main_window.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

QString nameOf(const QWidget* w) {
    QString name = QString::fromLatin1(w->metaObject()->className());
    if (!w->objectName().isEmpty()) name += " '" + w->objectName() + "'";
    if (const auto* l = qobject_cast<const QLabel*>(w)) name += " \"" + l->text().left(60) + "\"";
    if (const auto* b = qobject_cast<const QAbstractButton*>(w)) name += " \"" + b->text() + "\"";
    for (const QWidget* p = w->parentWidget(); p && !p->isWindow(); p = p->parentWidget()) {
        if (const auto* dock = qobject_cast<const QDockWidget*>(p)) {
            name += " in dock " + dock->windowTitle();
            break;
        }
    }
    return name;
}

// A scroll area's content may be larger than the viewport along the axes the area scrolls.
bool scrollsAlong(const QWidget* content, Qt::Orientation axis) {
    const QWidget* viewport = content->parentWidget();
    const auto* area =
        viewport ? qobject_cast<const QAbstractScrollArea*>(viewport->parentWidget()) : nullptr;
    if (!area || area->viewport() != viewport) return false;
    return (axis == Qt::Horizontal ? area->horizontalScrollBarPolicy()
                                   : area->verticalScrollBarPolicy()) != Qt::ScrollBarAlwaysOff;
}

// Text a label cannot show whole: wider (or, wrapped, taller) than the label, unless the label
// elides on purpose and carries the whole text as its tooltip.
QString labelProblem(const QLabel* l) {
    if (l->text().isEmpty() || !l->pixmap().isNull()) return {};
    const QRect room = l->contentsRect();
    if (l->wordWrap()) {
        const int needed = l->heightForWidth(l->width());
        return needed > l->height()
                   ? QStringLiteral("wrapped text needs %1 px, has %2").arg(needed).arg(l->height())
                   : QString();
    }
    const QSize needed = l->sizeHint();
    if (needed.width() <= l->width() && needed.height() <= l->height()) return {};
    if (l->text().contains(QChar(0x2026)) && !l->toolTip().isEmpty()) return {};  // elided
    return QStringLiteral("text needs %1 × %2 px, has %3 × %4 (%5)")
        .arg(needed.width())
        .arg(needed.height())
        .arg(room.width())
        .arg(room.height())
        .arg(l->text().left(80));
}

// Text of a Qt Charts chart (title, legend names, axis labels) that the chart had to cut: it
// ends such text in "..." where it does not fit.
QStringList chartProblems(const QChartView* view) {
    QStringList out;
    for (const QGraphicsItem* item : view->scene()->items()) {
        if (!item->isVisible()) continue;
        QString text;
        if (const auto* t = dynamic_cast<const QGraphicsTextItem*>(item)) text = t->toPlainText();
        if (const auto* t = dynamic_cast<const QGraphicsSimpleTextItem*>(item)) text = t->text();
        if (text.endsWith(QStringLiteral("...")) || text.endsWith(QChar(0x2026)))
            out << QStringLiteral("\"%1\" cut in the chart titled \"%2\" (%3 × %4 px)")
                       .arg(text)
                       .arg(view->chart()->title())
                       .arg(view->width())
                       .arg(view->height());
    }
    return out;
}

// Text a hand-drawn chart (the Gantt chart, the heatmap) cut short with "…", read from its SVG,
// which holds each line of text as drawn.
QStringList elidedChartText(const RangeChart* chart) {
    QTemporaryDir dir;
    const QString path = dir.filePath("chart.svg");
    if (!chart->exportSvg(path)) return {QStringLiteral("the chart did not export")};
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {QStringLiteral("cannot read ") + path};
    QStringList out;
    QXmlStreamReader xml(&f);
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement || xml.name() != QLatin1String("text"))
            continue;
        const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
        if (text.contains(QChar(0x2026)))
            out << QStringLiteral("%1: \"%2\" cut short").arg(nameOf(chart), text);
    }
    return out;
}

// Everything the window hides that a person should see.
QStringList clipped(QWidget* window) {
    QStringList out;
    for (QWidget* w : window->findChildren<QWidget*>()) {
        // Qt's own parts of a widget (a spin box's editor, a dock's title buttons) are its style's.
        if (!w->isVisible() || w->isWindow() || w->objectName().startsWith("qt_")) continue;
        const QWidget* parent = w->parentWidget();
        const QRect inside = parent->rect();
        const QRect g = w->geometry();
        // The main window parks what it does not show (the tab bar of a lone dock, the docks
        // behind the current tab) outside itself.
        if (qobject_cast<const QMainWindow*>(parent) && !g.intersects(inside)) continue;
        const bool xOut = g.left() < inside.left() || g.right() > inside.right();
        const bool yOut = g.top() < inside.top() || g.bottom() > inside.bottom();
        if ((xOut && !scrollsAlong(w, Qt::Horizontal)) ||
            (yOut && !scrollsAlong(w, Qt::Vertical))) {
            out << QStringLiteral("%1: %2,%3 %4×%5 outside its parent's %6×%7")
                       .arg(nameOf(w))
                       .arg(g.x())
                       .arg(g.y())
                       .arg(g.width())
                       .arg(g.height())
                       .arg(inside.width())
                       .arg(inside.height());
        }
        // Fields, charts and every widget that draws itself (no children): squeezed below their
        // minimum they cut what they draw.
        const bool leaf = w->findChildren<QWidget*>(Qt::FindDirectChildrenOnly).isEmpty();
        const bool field = qobject_cast<QAbstractButton*>(w) || qobject_cast<QComboBox*>(w) ||
                           qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QLineEdit*>(w) ||
                           qobject_cast<QChartView*>(w) ||
                           (leaf && w->sizePolicy().horizontalPolicy() != QSizePolicy::Ignored &&
                            w->sizePolicy().verticalPolicy() != QSizePolicy::Ignored);
        const QSize least = w->minimumSizeHint().expandedTo(w->minimumSize());
        if (field && (w->width() < least.width() || w->height() < least.height())) {
            out << QStringLiteral("%1: %2×%3, below its minimum %4×%5")
                       .arg(nameOf(w))
                       .arg(w->width())
                       .arg(w->height())
                       .arg(least.width())
                       .arg(least.height());
        }
        // Text that wraps (a legend): taller than its room is cut. (Containers are judged by
        // their parts: a splitter does not ask them for their height at their width.)
        if (leaf && w->hasHeightForWidth() && w->heightForWidth(w->width()) > w->height() &&
            !qobject_cast<QLabel*>(w)) {
            out << QStringLiteral("%1: needs %2 px of height, has %3")
                       .arg(nameOf(w))
                       .arg(w->heightForWidth(w->width()))
                       .arg(w->height());
        }
        // A box sized to its contents shows its current text whole only at its size hint.
        if (const auto* c = qobject_cast<QComboBox*>(w);
            c && c->sizeAdjustPolicy() == QComboBox::AdjustToContents &&
            c->width() < c->sizeHint().width()) {
            out << QStringLiteral("%1: %2 px wide, its text \"%3\" needs %4")
                       .arg(nameOf(w))
                       .arg(c->width())
                       .arg(c->currentText())
                       .arg(c->sizeHint().width());
        }
        if (const auto* l = qobject_cast<QLabel*>(w)) {
            const QString problem = labelProblem(l);
            if (!problem.isEmpty()) out << nameOf(w) + ": " + problem;
        }
        if (const auto* v = qobject_cast<QChartView*>(w)) {
            for (const QString& p : chartProblems(v)) out << nameOf(w) + ": " + p;
        }
    }
    return out;
}

void settle(MainWindow& w) {
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(20);
    }
    Q_UNUSED(w);
}

// The window's size after asking for `size` (a window with a larger minimum stays larger).
QSize resized(MainWindow& w, const QSize& size) {
    w.resize(size);
    settle(w);
    return w.size();
}

}  // namespace

class TestLayout : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }
    // Each test starts from no saved layout (one test's "Charts only" is not the next one's).
    void init() { QSettings().clear(); }

    void theWindowFitsTheSmallestSupportedSize() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const QSize least = w.minimumSizeHint();
        QVERIFY2(least.width() <= 1024 && least.height() <= 700,
                 qPrintable(QStringLiteral("the window needs at least %1 × %2")
                                .arg(least.width())
                                .arg(least.height())));
        QCOMPARE(resized(w, {1024, 700}), QSize(1024, 700));
    }

    void nothingIsClipped_data() {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("state");
        for (const QSize size : {QSize(1024, 700), QSize(1600, 1000)}) {
            const QString at = QStringLiteral("%1x%2 ").arg(size.width()).arg(size.height());
            for (const char* state :
                 {"default", "localsgd selected", "rpd selected", "S=64", "S=128", "diverged",
                  "theorem chart", "language model", "correctors"}) {
                QTest::newRow(qPrintable(at + state))
                    << size << QString("default") << QString(state);
            }
            for (const QString& id : presetIds())
                QTest::newRow(qPrintable(at + id)) << size << id << QString("preset");
        }
    }
    void nothingIsClipped() {
        QFETCH(QSize, size);
        QFETCH(QString, preset);
        QFETCH(QString, state);
        MainWindow w;
        w.show();
        QString error;
        QVERIFY2(w.loadPreset(preset, &error), qPrintable(error));
        QVERIFY2(w.waitForResults(test::timeout(120000), &error), qPrintable(error));
        MethodListEditor* methods = w.controls()->methods();
        auto select = [&](Method m) {
            const auto& specs = w.controller()->config().methods;
            for (size_t i = 0; i < specs.size(); ++i)
                if (specs[i].method == m) methods->list()->setCurrentRow(static_cast<int>(i));
        };
        if (state == "localsgd selected") select(Method::LocalSgd);
        if (state == "correctors") {
            // The picker with Adam's keys and three correctors on (each with its parameter): a
            // long name everywhere, the heatmap's "after correction" (accumulation) and the
            // uncorrected twin beside it (four methods, three with delays).
            const QString refused = w.controller()->tryModify([](ExperimentConfig& c) {
                c.methods[0].optimizer.kind = OptimizerKind::Adam;
                c.methods[0].correctors.prediction = true;
                c.methods[0].correctors.delayAdaptive = true;
                c.methods[0].correctors.accumulate = 2;
            });
            QVERIFY2(refused.isEmpty(), qPrintable(refused));
            select(Method::PipeDream);
            QVERIFY(methods->compareWithUncorrected());  // and its twin, dashed
            QVERIFY2(w.waitForResults(test::timeout(120000), &error), qPrintable(error));
            QCOMPARE(methods->list()->currentRow(), 0);  // the corrected method's picker
        }
        if (state == "rpd selected") select(Method::RandomizedPipeDream);
        auto modify = [&](const std::function<void(ExperimentConfig&)>& change) {
            const QString refused = w.controller()->tryModify(change);
            QVERIFY2(refused.isEmpty(), qPrintable(refused));
            QVERIFY2(w.waitForResults(test::timeout(300000), &error), qPrintable(error));
        };
        if (state == "S=64" || state == "S=128") {
            const int stages = state == "S=64" ? 64 : 128;
            modify([stages](ExperimentConfig& c) {
                c.stages = stages;
                c.data.dim = std::max(c.data.dim, stages);
                c.budget = {};
                c.budget.microbatches = 4 * stages;
            });
        }
        if (state == "diverged") {
            modify([](ExperimentConfig& c) {  // least squares blows up at a large γ
                c.objective.loss = LossKind::Quadratic;
                c.objective.l2 = 0.0;
                c.data.kind = "random";
                c.methods[0].step.value = 64.0;
            });
            QVERIFY(w.controller()->latest()->result(0).divergence.diverged);
        }
        if (state == "language model") {
            // Chosen in the panel: its fields in place of the data's, the Samples tab beside
            // the heatmap.
            QComboBox* objective = w.controls()->objectiveField();
            objective->setCurrentIndex(objective->findData("char_transformer"));
            QVERIFY(w.controller()->config().languageModel());
            QVERIFY2(w.waitForResults(test::timeout(120000), &error), qPrintable(error));
            QVERIFY(w.controller()->latest()->lmProblem());
        }
        if (state == "theorem chart") {
            w.lossChart()->setTheoremChartShown(true);
            QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        }
        QCOMPARE(resized(w, size), size);
        QStringList problems = clipped(&w);
        for (const RangeChart* chart :
             {static_cast<RangeChart*>(w.gantt()), static_cast<RangeChart*>(w.heatmap())})
            problems << elidedChartText(chart);
        const QByteArray grab = qgetenv("PIPELENS_LAYOUT_GRAB");  // pictures to look at
        if (!grab.isEmpty())
            w.grab().save(QString::fromLocal8Bit(grab) + "/" +
                          QString(QTest::currentDataTag()).replace(' ', '-') + ".png");
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    }

    // At 1024 x 700, with the panels open and in "Charts only", every preset's charts are usable:
    // the loss plot (its axes' rectangle) at least 450 x 250 px in sight, the Gantt chart's
    // stages at least 16 px high (S <= 16; the chart scrolls rather than squeeze them), and the
    // figure strip showing whole figures.
    void chartsAreUsableOnASmallScreen_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<bool>("chartsOnly");
        for (const QString& id : presetIds()) {
            QTest::newRow(qPrintable(id + " panels")) << id << false;
            QTest::newRow(qPrintable(id + " charts only")) << id << true;
        }
    }
    void chartsAreUsableOnASmallScreen() {
        QFETCH(QString, preset);
        QFETCH(bool, chartsOnly);
        MainWindow w;
        w.show();
        QString error;
        QVERIFY2(w.loadPreset(preset, &error), qPrintable(error));
        QVERIFY2(w.waitForResults(test::timeout(120000), &error), qPrintable(error));
        w.setChartsOnly(chartsOnly);
        QCOMPARE(resized(w, {1024, 700}), QSize(1024, 700));
        QVERIFY(w.chartsTabbed());
        // The loss chart is the tab in front after a preset; its plot in full.
        QVERIFY(w.lossChart()->isVisible());
        const QRectF plot = w.lossChart()->chart()->plotArea();
        QVERIFY2(plot.width() >= 450 && plot.height() >= 250,
                 qPrintable(QStringLiteral("the loss plot is %1 × %2 px")
                                .arg(plot.width())
                                .arg(plot.height())));
        const int stages = w.controller()->config().stages;
        if (w.gantt()->timeline() && stages <= 16) {
            const double lane = w.gantt()->plotRect().height() / stages;
            QVERIFY2(lane >= 16.0, qPrintable(QStringLiteral("%1 px a stage").arg(lane)));
        }
        // Only the tab in front is drawn (no other page on top of it).
        auto* front = w.findChild<QTabWidget*>("besideLoss");
        for (int i = 0; i < front->count(); ++i) {
            QVERIFY2(front->widget(i)->isVisible() == (i == front->currentIndex()),
                     qPrintable(front->tabText(i)));
        }
        // Every figure of the strip whole across its tab (rows of figures scroll).
        auto* tabs = w.findChild<QTabWidget*>("besideLoss");
        QWidget* strip = w.findChild<QWidget*>("figureStripArea");
        QVERIFY(tabs && strip && tabs->indexOf(strip) >= 0);
        tabs->setCurrentWidget(strip);
        settle(w);
        const QRect room(strip->mapTo(&w, QPoint(0, 0)), strip->size());
        for (QChartView* v : w.figureStrip()->findChildren<QChartView*>()) {
            if (!v->isVisible()) continue;
            const QRect at(v->mapTo(&w, QPoint(0, 0)), v->size());
            QVERIFY2(at.left() >= room.left() && at.right() <= room.right(),
                     qPrintable(QStringLiteral("\"%1\" is cut: %2..%3 of "
                                               "%4..%5")
                                    .arg(v->chart()->title())
                                    .arg(at.left())
                                    .arg(at.right())
                                    .arg(room.left())
                                    .arg(room.right())));
        }
        const QStringList problems = clipped(&w);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    }

    // "Charts only" folds the panels away and brings back the ones that were open; the choice
    // outlives the window.
    void chartsOnlyFoldsThePanelsAndIsRemembered() {
        auto docks = [](MainWindow& w) {
            QStringList shown;
            for (QDockWidget* d : w.findChildren<QDockWidget*>())
                if (d->isVisible()) shown << d->objectName();
            shown.sort();
            return shown;
        };
        {
            MainWindow w;
            w.resize(1600, 1000);
            w.show();
            settle(w);
            QVERIFY(!w.chartsOnly());
            const QStringList before = docks(w);
            QVERIFY(before.contains("controlsDock") && before.contains("lessonDock"));
            const int wide = w.centralWidget()->width();
            w.chartsOnlyAction()->trigger();  // as the menu and Ctrl+Shift+F do
            settle(w);
            QVERIFY(w.chartsOnly());
            QCOMPARE(docks(w), QStringList());
            QVERIFY(w.centralWidget()->width() > wide);
            QCOMPARE(w.chartsOnlyAction()->shortcut(),
                     QKeySequence(QStringLiteral("Ctrl+Shift+F")));
            w.close();  // as a person quits
        }
        {
            MainWindow w;  // a new session starts as the last one ended
            w.resize(1600, 1000);
            w.show();
            settle(w);
            QVERIFY(w.chartsOnly());
            QCOMPARE(docks(w), QStringList());
            w.setChartsOnly(false);
            settle(w);
            QVERIFY(docks(w).contains("controlsDock"));
            QVERIFY(docks(w).contains("lessonDock"));
            w.close();
        }
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        settle(w);
        QVERIFY(!w.chartsOnly());
    }

    // A roomy window keeps the loss chart beside the heatmap and the strip under them; a small
    // one makes them tabs, and growing again puts them back.
    void chartsAreTabbedOnlyWhereRoomIsShort() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QCOMPARE(resized(w, {1600, 1000}), QSize(1600, 1000));
        QVERIFY(!w.chartsTabbed());
        auto* middle = w.findChild<QSplitter*>("middleSplitter");
        QCOMPARE(middle->indexOf(w.lossChart()), 0);
        QCOMPARE(resized(w, {1024, 700}), QSize(1024, 700));
        QVERIFY(w.chartsTabbed());
        QCOMPARE(middle->indexOf(w.lossChart()), -1);
        QCOMPARE(resized(w, {1600, 1000}), QSize(1600, 1000));
        QVERIFY(!w.chartsTabbed());
        QCOMPARE(middle->indexOf(w.lossChart()), 0);
        QVERIFY(w.findChild<QSplitter*>("verticalSplitter")
                    ->indexOf(w.findChild<QWidget*>("figureStripArea")) == 2);
        const QStringList problems = clipped(&w);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    }

    // At the default size the selected method's γ is in sight without scrolling, whichever
    // method is selected.
    void gammaShowsWithoutScrolling() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        settle(w);
        MethodListEditor* methods = w.controls()->methods();
        for (int row = 0; row < methods->list()->count(); ++row) {
            methods->list()->setCurrentRow(row);
            settle(w);
            QWidget* gamma = methods->stepSlider();
            QVERIFY(gamma->isVisible());
            auto* area = qobject_cast<QScrollArea*>(w.controls()->parentWidget()->parentWidget());
            QVERIFY(area);
            QCOMPARE(area->verticalScrollBar()->value(), 0);
            const QRect shown(gamma->mapTo(area->viewport(), QPoint(0, 0)), gamma->size());
            QVERIFY2(area->viewport()->rect().contains(shown),
                     qPrintable(QStringLiteral("γ at y = %1..%2, the panel shows 0..%3")
                                    .arg(shown.top())
                                    .arg(shown.bottom())
                                    .arg(area->viewport()->height())));
        }
    }

    // A refused value's message appears without moving any other control of the panel.
    void anErrorMessageMovesNoControl() {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        settle(w);
        ControlsPanel* panel = w.controls();
        QList<QWidget*> fields = {
            panel->objectiveField(), panel->dimField(),    panel->l2Field(),
            panel->stagesField(),    panel->batchField(),  panel->budgetField(),
            panel->seedField(),      panel->deviceField(), panel->methods()->noamField()};
        QList<QPoint> before;
        for (QWidget* f : fields) before << f->mapTo(&w, QPoint(0, 0));
        panel->rowsField()->setValue(601);  // not a multiple of b = 10: refused
        LogSlider* gamma = panel->methods()->stepSlider();
        gamma->field()->setText("0");  // γ must be > 0: refused
        emit gamma->field()->editingFinished();
        settle(w);
        QVERIFY(!panel->errors().message(panel->rowsField()).isEmpty());
        QVERIFY(!panel->methods()->errors().message(gamma).isEmpty());
        QVERIFY(panel->messageArea()->isVisible());
        QCOMPARE(panel->messageArea()->text(), panel->methods()->errors().message(gamma));
        for (qsizetype i = 0; i < fields.size(); ++i) {
            const QPoint after = fields[i]->mapTo(&w, QPoint(0, 0));
            QVERIFY2(after == before[i],
                     qPrintable(QStringLiteral("%1 (field %2) moved from %3,%4 to %5,%6 when the "
                                               "message appeared")
                                    .arg(nameOf(fields[i]))
                                    .arg(i)
                                    .arg(before[i].x())
                                    .arg(before[i].y())
                                    .arg(after.x())
                                    .arg(after.y())));
        }
        const QStringList problems = clipped(&w);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    }
};

QTEST_MAIN(TestLayout)
#include "tst_layout.moc"
