// The one CSV writer (issue 28): RFC 4180 quoting and the formula guard on text cells, numbers
// untouched, and the tables built on it read back cell for cell by a strict reader.
#include <QtTest>

#include <string>
#include <vector>

#include "csv_strict_reader.hpp"
#include "experiment/protocols/paper_protocols.hpp"
#include "schedule/delays.hpp"
#include "schedule/schedule_tables.hpp"
#include "schedule/timeline.hpp"
#include "util/csv_writer.hpp"

using namespace pipelens;

namespace {

// A label with everything that broke the files: a quote, a comma, a newline and a leading '='.
const std::string kNasty = "=HYPERLINK(\"x\"),\"a\nb";

std::string oneCell(std::string_view s, bool label) {
    CsvWriter w;
    if (label)
        w.label(s);
    else
        w.text(s);
    return w.take();
}

}  // namespace

class TestCsvWriter : public QObject {
    Q_OBJECT

  private slots:
    void plainCellsAsBefore() {
        QCOMPARE(oneCell("pd", false), std::string("pd"));
        QCOMPARE(oneCell("PD 1F1B", true), std::string("\"PD 1F1B\""));
        QCOMPARE(oneCell("R=4, H=5", true), std::string("\"R=4, H=5\""));
        CsvWriter w;
        w.header("method,x").label("a").integer(3).endRow().label("b").empty().endRow();
        QCOMPARE(w.take(), std::string("method,x\n\"a\",3\n\"b\",\n"));
    }

    void quotingFollowsRfc4180() {
        QCOMPARE(oneCell("a,b", false), std::string("\"a,b\""));
        QCOMPARE(oneCell("say \"hi\"", false), std::string("\"say \"\"hi\"\"\""));
        QCOMPARE(oneCell("l1\nl2", false), std::string("\"l1\nl2\""));
        QCOMPARE(oneCell("l1\rl2", false), std::string("\"l1\rl2\""));
        QCOMPARE(oneCell("x\"", true), std::string("\"x\"\"\""));
    }

    void formulaGuardOnTextOnly() {
        QCOMPARE(oneCell("=1+2", false), std::string("'=1+2"));
        QCOMPARE(oneCell("+1", false), std::string("'+1"));
        QCOMPARE(oneCell("-x", false), std::string("'-x"));
        QCOMPARE(oneCell("@sum", false), std::string("'@sum"));
        QCOMPARE(oneCell("\tx", false), std::string("'\tx"));
        QCOMPARE(oneCell("\rx", false), std::string("\"'\rx\""));
        QCOMPARE(oneCell("=cmd", true), std::string("\"'=cmd\""));
        QCOMPARE(oneCell("a=b", false), std::string("a=b"));
        CsvWriter w;
        w.number(-1.5).integer(-3).number(0.1);
        QCOMPARE(w.take(), std::string("-1.5,-3,0.10000000000000001"));
    }

    void nastyLabelReadsBack() {
        CsvWriter w;
        w.header("method,v").label(kNasty).number(1.0).endRow().text(kNasty).number(-2.0).endRow();
        const auto rows = csvtest::readStrict(w.take());
        QVERIFY(rows);
        QCOMPARE(rows->size(), std::size_t(3));
        QCOMPARE((*rows)[1][0], "'" + kNasty);
        QCOMPARE((*rows)[2][0], "'" + kNasty);
        QCOMPARE((*rows)[2][1], std::string("-2"));
    }

    // The tables that carry a label: each row has the header's width and the guarded label.
    void tablesCarryTheLabelIntact() {
        ScheduleParams p;
        p.kind = ScheduleKind::PipeDream;
        p.stages = 2;
        p.microbatches = 3;
        const Timeline tl = buildTimeline(p);
        const DelayTable d(tl);
        FigurePanel fig;
        FigureSeries series;
        series.name = kNasty;
        series.x = {1.0, 2.0};
        series.y = {-1.5, 3.0};
        fig.series.push_back(series);
        for (const std::string& text :
             {ganttTableCsv(tl, &d, kNasty), delayTableCsv(d, kNasty), figureCsv(fig)}) {
            const auto rows = csvtest::readStrict(text);
            QVERIFY2(rows, text.c_str());
            QVERIFY(rows->size() > 1);
            for (std::size_t r = 1; r < rows->size(); ++r) {
                QCOMPARE((*rows)[r].size(), (*rows)[0].size());
                QCOMPARE((*rows)[r][0], "'" + kNasty);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestCsvWriter)
#include "tst_csv_writer.moc"
