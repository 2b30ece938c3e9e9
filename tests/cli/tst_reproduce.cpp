// `pipelens-cli reproduce all --quick` through the real binary: the summaries carry the paper's
// findings as the quick protocol shows them, and every figure is a real drawing.
#include <QColor>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

namespace {

nlohmann::json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return nlohmann::json::parse(f.readAll().toStdString());
}

double gapOf(const nlohmann::json& methods, std::size_t i) {
    return methods.at(i).at("final_gap").get<double>();
}

}  // namespace

class TestReproduce : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString out_;

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        out_ = dir_.filePath("figs");
        QProcess p;
        p.start(PIPELENS_CLI_PATH, {"reproduce", "all", "--quick", "--out", out_, "--quiet"});
        QVERIFY(p.waitForFinished(300000));
        QCOMPARE(p.exitCode(), 0);
    }

    void e1MaximaEqualTheFormulaAndFitsMatch() {
        const auto s = readJson(out_ + "/E1/summary.json");
        const auto& rows = s.at("per_stage");
        QVERIFY(rows.size() >= 30);
        for (const auto& r : rows) {
            const double S = r.at("stages").get<double>();
            QCOMPARE(r.at("max").get<long long>(),
                     static_cast<long long>(std::floor(S * S - S / 2)));
        }
        QVERIFY(std::abs(s.at("fit_max").at("s2").get<double>() - 1.0) < 0.01);
        QVERIFY(std::abs(s.at("fit_max").at("s").get<double>() + 0.5) < 0.1);
        QVERIFY(std::abs(s.at("fit_mean").at("s2").get<double>() - 0.5) < 0.01);
    }

    // Methods in order: PD, RPD delta = 8, 30, 60, 180, 420. The quick protocol shows
    // delta = 8, 30 < PD < 180 < 420 and 60 < 180; PD against delta = 60 is documented.
    void e2OrdersTheDeltas() {
        const auto m = readJson(out_ + "/E2/summary.json").at("methods");
        QCOMPARE(m.size(), std::size_t(6));
        QVERIFY(gapOf(m, 1) < gapOf(m, 0));
        QVERIFY(gapOf(m, 2) < gapOf(m, 0));
        QVERIFY(gapOf(m, 3) < gapOf(m, 4));
        QVERIFY(gapOf(m, 0) < gapOf(m, 4));
        QVERIFY(gapOf(m, 4) < gapOf(m, 5));
        // delta = 8 and 30 within two orders of magnitude of each other ("about equal").
        QVERIFY(std::abs(std::log10(gapOf(m, 1) / gapOf(m, 2))) < 2.0);
    }

    // RPD draws with the authors' seed 0 (SPEC section 6). A method seed of 0 stands for the
    // experiment's seed (docs/config.md), so the experiment seed must be 0 as well.
    void e2RpdUsesTheAuthorsSeed() {
        const auto config = readJson(out_ + "/E2/summary.json").at("config");
        QCOMPARE(config.at("seed").get<int>(), 0);
        int rpd = 0;
        for (const auto& m : config.at("methods")) {
            if (m.at("method") != "rpd") continue;
            ++rpd;
            QCOMPARE(m.at("seed").get<int>(), 0);
        }
        QCOMPARE(rpd, 5);
    }

    // Tridiagonal quadratic: PD < H = 2 < H = 5 < H = 30, each within 25 % of the paper's value
    // (2.73, 19.5, 22.5, about 270). The quick protocol uses the full data, only a shorter grid.
    void e3QuadraticMatchesThePaper() {
        const auto m = readJson(out_ + "/E3/summary.json").at("quadratic").at("methods");
        QCOMPARE(m.size(), std::size_t(4));
        QVERIFY(gapOf(m, 0) < gapOf(m, 1));
        QVERIFY(gapOf(m, 1) < gapOf(m, 2));
        QVERIFY(gapOf(m, 2) < gapOf(m, 3));
        const double paper[] = {2.73, 19.5, 22.5, 270.0};
        for (std::size_t i = 0; i < 4; ++i) {
            const double ratio = gapOf(m, i) / paper[i];
            QVERIFY2(
                ratio > 0.75 && ratio < 1.25,
                qPrintable(
                    QString("method %1: %2 vs paper %3").arg(i).arg(gapOf(m, i)).arg(paper[i])));
        }
    }

    // Noisy logistic panel: LocalSGD (H = 5) ends well below PD, as in the paper (7e-3 vs 3.7e-2).
    void e3LogisticWinnerIsLocalSgd() {
        const auto m = readJson(out_ + "/E3/summary.json").at("logistic").at("methods");
        QCOMPARE(m.size(), std::size_t(2));
        QVERIFY2(gapOf(m, 1) * 2 < gapOf(m, 0),
                 qPrintable(QString("LocalSGD %1, PD %2").arg(gapOf(m, 1)).arg(gapOf(m, 0))));
    }

    // Quick E4 (S = 2, 8, 32). With the stable rule (the paper's): PD stays near 1e-2 at every S
    // and LocalSGD is below PD at S = 32; it is not at S = 8 (the rule picks a slow step there,
    // docs/reproduction.md), so the paper's "from S >= 4" is not checked for this rule.
    void e4StableRuleLocalSgdWinsAtLargeS() {
        const auto rows = readJson(out_ + "/E4/summary.json").at("per_stage");
        QCOMPARE(rows.size(), std::size_t(3));
        for (const auto& r : rows) {
            const auto& m = r.at("methods");
            QCOMPARE(m.size(), std::size_t(3));
            QCOMPARE(m.at(2).at("method").get<std::string>(), std::string("localsgd"));
            const double pd = m.at(0).at("final_objective").at("mean").get<double>();
            QVERIFY2(pd > 3e-3 && pd < 3e-2, qPrintable(QString("PD f = %1").arg(pd)));
        }
        const auto& last = rows.at(2);
        QCOMPARE(last.at("stages").get<double>(), 32.0);
        const double pd = last.at("methods").at(0).at("final_objective").at("mean").get<double>();
        const double local =
            last.at("methods").at(2).at("final_objective").at("mean").get<double>();
        QVERIFY2(local < pd, qPrintable(QString("LocalSGD %1, PD %2").arg(local).arg(pd)));
    }

    // The same E4 grids read with best-final: LocalSGD ends below PD from S = 8 on.
    void e4BestFinalLocalSgdWinsFromS8() {
        const auto rows = readJson(out_ + "/E4/summary.json").at("per_stage");
        for (const auto& r : rows) {
            if (r.at("stages").get<double>() < 8) continue;
            const auto& m = r.at("methods");
            const double pd = m.at(0).at("best_final").at("final_objective").get<double>();
            const double local = m.at(2).at("best_final").at("final_objective").get<double>();
            QVERIFY2(local < pd, qPrintable(QString("S = %1: LocalSGD %2, PD %3")
                                                .arg(r.at("stages").get<double>())
                                                .arg(local)
                                                .arg(pd)));
        }
    }

    void everyFigureIsDrawn() {
        for (const char* id : {"E1", "E2", "E3", "E4"}) {
            const auto s = readJson(out_ + "/" + id + "/summary.json");
            QVERIFY2(!s.at("figures").empty(), id);
            for (const auto& f : s.at("figures")) {
                const QString base = out_ + "/" + id + "/";
                QImage png(base + QString::fromStdString(f.at("png")));
                QVERIFY2(png.width() >= 800 && png.height() >= 500, id);
                const QRgb background = png.pixel(0, 0);
                long long drawn = 0;
                for (int y = 0; y < png.height(); y += 2) {
                    for (int x = 0; x < png.width(); x += 2) drawn += png.pixel(x, y) != background;
                }
                QVERIFY2(drawn > 5000,
                         qPrintable(QString("%1: %2 drawn pixels").arg(id).arg(drawn)));
                QFile svg(base + QString::fromStdString(f.at("svg")));
                QVERIFY(svg.open(QIODevice::ReadOnly));
                const QByteArray text = svg.readAll();
                QVERIFY2(text.contains(QByteArray::fromStdString(f.at("x_title"))), id);
                QVERIFY2(text.contains(QByteArray::fromStdString(f.at("y_title"))), id);
                QVERIFY(QFile::exists(base + QString::fromStdString(f.at("csv"))));
            }
        }
    }

    // E5 quick on the built-in corpus: PD (first) ends below every LocalSGD at equal time, each
    // step picked from 2^-5 ... 2^-1 by the stable rule, and the summary says the corpus is not
    // Tiny Shakespeare.
    void e5QuickPipeDreamBeatsLocalSgd() {
        const QString out = dir_.filePath("e5-quick");
        QProcess p;  // not part of `all`: run on its own
        p.start(PIPELENS_CLI_PATH, {"reproduce", "E5", "--quick", "--out", out, "--quiet"});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(QImage(out + "/E5/figure.png").width() >= 800);
        const auto s = readJson(out + "/E5/summary.json");
        QVERIFY(s.at("corpus_is_built_in").get<bool>());
        QVERIFY(s.at("note").get<std::string>().find("built-in corpus") != std::string::npos);
        const auto& m = s.at("methods");
        QCOMPARE(m.size(), std::size_t(4));
        QVERIFY(m.at(0).at("label").get<std::string>().starts_with("PipeDream"));
        for (std::size_t i = 0; i < m.size(); ++i) {
            QVERIFY(!m.at(i).at("diverged").get<bool>());
            QCOMPARE(m.at(i).at("grid").size(), std::size_t(5));
            const double step = m.at(i).at("step_size").get<double>();
            QVERIFY(step >= 0.03125 && step <= 0.5);
            if (i > 0)
                QVERIFY(m.at(0).at("final_loss").get<double>() <
                        m.at(i).at("final_loss").get<double>());
        }
        // Every method's curve is in the CSV, on one slot axis.
        QFile csv(out + "/E5/figure.csv");
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QByteArray text = csv.readAll();
        QVERIFY(text.contains("\"LocalSGD (R=4, H=8)\",599,"));
        QVERIFY(text.contains("\"PipeDream\",599,"));
    }

    // --paper-step and --corpus: 0.125 for every method (no grid), trained on the given file.
    void e5PaperStepOnAGivenCorpus() {
        const QString corpus = dir_.filePath("corpus.txt");
        QFile f(corpus);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (int i = 0; i < 800; ++i) f.write("To be, or not to be: that is the question.\n");
        f.close();
        const QString out = dir_.filePath("e5");
        QProcess p;
        p.start(PIPELENS_CLI_PATH, {"reproduce", "E5", "--quick", "--paper-step", "--corpus",
                                    corpus, "--out", out, "--quiet"});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const auto s = readJson(out + "/E5/summary.json");
        QVERIFY(!s.at("corpus_is_built_in").get<bool>());
        QVERIFY(!s.contains("note"));
        QCOMPARE(QString::fromStdString(s.at("corpus").get<std::string>()), "\"" + corpus + "\"");
        QVERIFY(s.at("step_size_choice").get<std::string>().find("0.125") != std::string::npos);
        for (const auto& m : s.at("methods")) {
            QCOMPARE(m.at("step_size").get<double>(), 0.125);
            QCOMPARE(m.at("grid").size(), std::size_t(1));
        }
    }

    void unknownExperimentIsRejected() {
        QProcess p;
        p.start(PIPELENS_CLI_PATH, {"reproduce", "E9", "--out", dir_.filePath("x")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("E9"));
        QVERIFY(!QFile::exists(dir_.filePath("x")));
    }
};

QTEST_GUILESS_MAIN(TestReproduce)
#include "tst_reproduce.moc"
