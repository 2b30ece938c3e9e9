// The paper presets are the protocols of `pipelens-cli reproduce` (SPEC section 7), and each
// lesson states what its preset shows: these run the preset (E4: a smaller grid, S in
// {2, 8, 32} and gamma from 2^-6, to stay short) and check every claim of its lesson.
#include <QTest>
#include <cmath>

#include <algorithm>

#include "controllers/presets.hpp"
#include "experiment/protocols/paper_protocols.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "experiment/sweep/sweep.hpp"
#include "objective/lm/lm_sampling.hpp"
#include "schedule/delays.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// The final values of every point of a sweep, [point][method].
std::vector<std::vector<MeanSd>> sweepFinals(const SweepSpec& spec, SweepMetric metric) {
    const SweepOutcome outcome = runSweep(spec, {});
    std::vector<std::vector<MeanSd>> out;
    for (const auto& p : outcome.points) {
        if (!p) return {};
        std::vector<MeanSd> row;
        for (const MethodPoint& m : p->methods) {
            row.push_back(metric == SweepMetric::FinalGap ? m.finalGap : m.finalObjective);
        }
        out.push_back(row);
    }
    return out;
}

double finalGap(const ExperimentResult& r, std::size_t method) {
    return r.methods[method].grid[static_cast<std::size_t>(r.methods[method].chosen)].finalGap.mean;
}

QByteArray describe(const char* what, double a, double b) {
    return QByteArray(what) + ": " + QByteArray::number(a, 'g', 4) + " vs " +
           QByteArray::number(b, 'g', 4);
}

}  // namespace

class TestPresetLessons : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    // E2 (the whole preset): PD flat; RPD rises with delta from 30 on, 8 and 30 within a factor
    // 3; 8 and 30 far below PD, 180 and 420 far above; delta = 60 the closest to PD, within a
    // factor of 10.
    void e2DeltaSweep() {
        const Preset p = loadPreset("e2-pd-vs-rpd");
        QVERIFY(p.sweep);
        QCOMPARE(p.sweep->values, (std::vector<double>{8, 30, 60, 180, 420}));
        const auto f = sweepFinals(*p.sweep, p.metric);
        QCOMPARE(f.size(), std::size_t(5));
        const double pd = f[0][0].mean;
        for (const auto& row : f) QCOMPARE(row[0].mean, pd);  // flat: the same run at every delta
        std::vector<double> rpd;
        rpd.reserve(f.size());
        for (const auto& row : f) rpd.push_back(row[1].mean);
        for (std::size_t i = 2; i < rpd.size(); ++i) {
            QVERIFY2(rpd[i] > rpd[i - 1], describe("rises with delta", rpd[i], rpd[i - 1]));
        }
        QVERIFY2(std::abs(std::log10(rpd[0] / rpd[1])) < std::log10(3.0),
                 describe("8 ~ 30", rpd[0], rpd[1]));
        QVERIFY2(rpd[0] < pd / 1000 && rpd[1] < pd / 1000, describe("8, 30 below PD", rpd[1], pd));
        QVERIFY2(rpd[3] > pd * 1000 && rpd[4] > pd * 1000,
                 describe("180, 420 above PD", rpd[3], pd));
        std::size_t closest = 0;
        for (std::size_t i = 1; i < rpd.size(); ++i) {
            if (std::abs(std::log10(rpd[i] / pd)) < std::abs(std::log10(rpd[closest] / pd)))
                closest = i;
        }
        QCOMPARE(closest, std::size_t(2));
        QVERIFY2(std::abs(std::log10(rpd[2] / pd)) < std::log10(10.0),
                 describe("60 near PD", rpd[2], pd));
        // The loss chart's one run of PD and RPD at every δ: its curves end at the sweep's
        // points, so the overlay shows what the Sweep chart does.
        const ExperimentResult all = runExperiment(p.config);
        QCOMPARE(all.methods.size(), std::size_t(6));
        QVERIFY2(std::abs(finalGap(all, 0) / pd - 1) < 1e-9, describe("PD", finalGap(all, 0), pd));
        for (std::size_t i = 0; i < rpd.size(); ++i) {
            QCOMPARE(all.methods[i + 1].spec.delta, static_cast<long long>(p.sweep->values[i]));
            QVERIFY2(std::abs(finalGap(all, i + 1) / rpd[i] - 1) < 1e-9,
                     describe("RPD", finalGap(all, i + 1), rpd[i]));
        }
    }

    // E3 quadratic (the whole preset): PD < H=2 < H=5 < H=30, PD at least 3x below H=2, H=30
    // more than 5x above H=5.
    void e3QuadraticOrder() {
        const Preset p = loadPreset("e3-quadratic");
        QVERIFY(!p.sweep);
        const ExperimentResult r = runExperiment(p.config);
        QCOMPARE(r.methods.size(), std::size_t(4));
        const double pd = finalGap(r, 0), h2 = finalGap(r, 1), h5 = finalGap(r, 2),
                     h30 = finalGap(r, 3);
        QCOMPARE(r.methods[1].spec.localSteps, 2);
        QCOMPARE(r.methods[3].spec.localSteps, 30);
        QVERIFY2(pd * 3 < h2, describe("PD vs H=2", pd, h2));
        QVERIFY2(h2 < h5, describe("H=2 vs H=5", h2, h5));
        QVERIFY2(h5 * 5 < h30, describe("H=5 vs H=30", h5, h30));
    }

    // E3 logistic (the whole preset): LocalSGD more than 3x below PD; LocalSGD's step larger.
    void e3LogisticLocalSgdAhead() {
        const Preset p = loadPreset("e3-logistic");
        const ExperimentResult r = runExperiment(p.config);
        const double pd = finalGap(r, 0), local = finalGap(r, 1);
        QVERIFY2(local * 3 < pd, describe("LocalSGD vs PD", local, pd));
        const double pdStep =
            r.methods[0].grid[static_cast<std::size_t>(r.methods[0].chosen)].stepSize;
        const double localStep =
            r.methods[1].grid[static_cast<std::size_t>(r.methods[1].chosen)].stepSize;
        QVERIFY2(localStep > pdStep, describe("steps", localStep, pdStep));
    }

    // E4 on S = 2, 8, 32 with the grid 2^-6 ... 2^0 (the preset otherwise): final f of PD
    // within a factor 3 of 1e-2 at every S, RPD within a factor 3 of PD; LocalSGD above PD at
    // S = 2 and 8, below it at S = 32, and lower at 32 than at 2 and 8.
    void e4StagesSweep() {
        const Preset p = loadPreset("e4-scaling");
        QVERIFY(p.sweep);
        QCOMPARE(p.metric, SweepMetric::FinalObjective);
        QCOMPARE(p.sweep->values, (std::vector<double>{2, 4, 8, 16, 32, 64, 128}));
        nlohmann::json j = p.sweep->toJson();
        j["axis"]["values"] = {2, 8, 32};
        for (auto& m : j["experiment"]["methods"]) m["step_size"]["grid"][0] = -6;
        const auto f = sweepFinals(SweepSpec::fromJson(j), p.metric);
        QCOMPARE(f.size(), std::size_t(3));
        for (const auto& row : f) {
            const double pd = row[0].mean, rpd = row[1].mean;
            QVERIFY2(pd > 1e-2 / 3 && pd < 1e-2 * 3, describe("PD near 1e-2", pd, 1e-2));
            QVERIFY2(rpd > pd / 3 && rpd < pd * 3, describe("RPD near PD", rpd, pd));
        }
        QVERIFY2(f[0][2].mean > f[0][0].mean,
                 describe("S=2 LocalSGD vs PD", f[0][2].mean, f[0][0].mean));
        QVERIFY2(f[1][2].mean > f[1][0].mean,
                 describe("S=8 LocalSGD vs PD", f[1][2].mean, f[1][0].mean));
        QVERIFY2(f[2][2].mean < f[2][0].mean,
                 describe("S=32 LocalSGD vs PD", f[2][2].mean, f[2][0].mean));
        QVERIFY(f[2][2].mean < f[0][2].mean && f[2][2].mean < f[1][2].mean);
    }

    // E5 (the whole preset): every method's first forward loss within 0.5 of log V; PD and RPD
    // end below log V / 2 and within 0.15 nats of each other; LocalSGD ends more than 0.3 nats
    // above PD with fewer block updates; PD's delay table is there (the heatmap), RPD's delta is
    // S^2 - S/2 = 14; every method's
    // samples score better under the corpus's character bigrams than the untrained model's.
    void e5LanguageModel() {
        const Preset p = loadPreset("e5-language-model");
        QVERIFY(!p.sweep);
        QVERIFY(p.config.languageModel());
        const ExperimentResult r = runExperiment(p.config);
        QCOMPARE(r.methods.size(), std::size_t(3));
        QCOMPARE(r.methods[0].spec.method, Method::PipeDream);
        QCOMPARE(r.methods[1].spec.method, Method::LocalSgd);
        QCOMPARE(r.methods[2].spec.method, Method::RandomizedPipeDream);
        QCOMPARE(r.budget.slotBudget, 600);
        const CharTransformerProblem& problem = *r.lmProblem;
        QCOMPARE(problem.corpus.vocabSize(), 45);
        const double logV = std::log(45.0);
        for (const MethodRun& m : r.methods) {
            QVERIFY(!lmOf(m).log.forwardLosses.empty());
            const double first = lmOf(m).log.forwardLosses.front().loss;
            QVERIFY2(std::abs(first - logV) < 0.5, describe("first loss vs log V", first, logV));
        }
        const double pd = lmOf(r.methods[0]).finalLoss, local = lmOf(r.methods[1]).finalLoss,
                     rpd = lmOf(r.methods[2]).finalLoss;
        QVERIFY2(pd < logV / 2 && rpd < logV / 2, describe("PD, RPD below log V / 2", pd, rpd));
        QVERIFY2(std::abs(pd - rpd) < 0.15, describe("PD vs RPD", pd, rpd));
        QVERIFY2(local > pd + 0.3, describe("LocalSGD vs PD", local, pd));
        QVERIFY2(r.methods[1].result.updates < r.methods[0].result.updates,
                 describe("updates LocalSGD vs PD", double(r.methods[1].result.updates),
                          double(r.methods[0].result.updates)));
        // The heatmap's table: PD's delays per block and update, as for a linear model.
        QVERIFY(r.methods[0].result.delays);
        QCOMPARE(r.methods[0].result.delays->stages(), 4);
        QCOMPARE(r.methods[0].result.delays->updates(), r.methods[0].result.updates);
        QVERIFY(r.methods[0].result.timeline);
        QCOMPARE(r.methods[2].result.maxDelay, pipeDreamMaxDelayFormula(4));
        QCOMPARE(pipeDreamMaxDelayFormula(4), 14LL);
        // Bigram log-probabilities (add-one) from the corpus's own text, per character.
        const int V = problem.corpus.vocabSize();
        std::vector<double> counts(static_cast<std::size_t>(V * V), 1.0),
            totals(static_cast<std::size_t>(V), V);
        const std::vector<int>& ids = problem.corpus.ids;
        for (std::size_t i = 1; i < ids.size(); ++i) {
            counts[static_cast<std::size_t>(ids[i - 1] * V + ids[i])] += 1.0;
            totals[static_cast<std::size_t>(ids[i - 1])] += 1.0;
        }
        auto score = [&](const std::string& text) {
            std::vector<int> t;
            for (unsigned char ch : text) {
                const auto at = problem.corpus.vocab.find(static_cast<char32_t>(ch));
                if (at == std::u32string::npos) return -1e9;
                t.push_back(static_cast<int>(at));
            }
            double sum = 0.0;
            for (std::size_t i = 1; i < t.size(); ++i)
                sum += std::log(counts[static_cast<std::size_t>(t[i - 1] * V + t[i])] /
                                totals[static_cast<std::size_t>(t[i - 1])]);
            return sum / static_cast<double>(t.size() - 1);
        };
        const LanguageModelSpec& spec = *p.config.objective.languageModel;
        double untrained = 0.0;
        for (int l = 0; l < spec.sampleLines; ++l)
            untrained +=
                score(sampleText(problem, problem.w0, p.config.seed + l, spec.sampleLength));
        untrained /= spec.sampleLines;
        for (const MethodRun& m : r.methods) {
            QCOMPARE(static_cast<int>(lmOf(m).samples.size()), spec.sampleLines);
            double trained = 0.0;
            for (const std::string& line : lmOf(m).samples) trained += score(line);
            trained /= spec.sampleLines;
            QVERIFY2(trained > untrained, describe(m.label.c_str(), trained, untrained));
        }
    }

    // The paper presets are the protocols `pipelens-cli reproduce` runs (paper_protocols.cpp
    // reports each config in its summary). E3 full; E2 and E4 from their quick protocols, which
    // differ from the full ones only in size (E2: n = 500, d = 128, b = 25; E4: S = 2, 8, 32 and
    // a grid from 2^-6), set back to the preset's before comparing.
    void presetsAreTheReproduceProtocols() {
        auto same = [](ExperimentConfig a, ExperimentConfig b) {
            a.name = b.name = "protocol";
            return a.toJson() == b.toJson();
        };
        const Reproduction e2 = reproduce("E2", true);
        QVERIFY2(e2.summary.contains("config"), "reproduce E2 does not report its config");
        ExperimentConfig protocol2 = ExperimentConfig::fromJson(e2.summary.at("config"));
        const SweepSpec sweep2 = *loadPreset("e2-pd-vs-rpd").sweep;
        QCOMPARE(protocol2.data.rows / protocol2.batchSize, 20);  // the quick size keeps M = 20
        protocol2.data.rows = sweep2.experiment.data.rows;
        protocol2.data.dim = sweep2.experiment.data.dim;
        protocol2.batchSize = sweep2.experiment.batchSize;
        QCOMPARE(protocol2.methods.size(), sweep2.points() + 1);
        for (std::size_t i = 0; i < sweep2.points(); ++i) {
            ExperimentConfig one = protocol2;
            one.methods = {protocol2.methods[0], protocol2.methods[i + 1]};
            QVERIFY2(same(sweep2.pointConfig(i), one), qPrintable(QString("E2 point %1").arg(i)));
        }
        const Reproduction e3 = reproduce("E3", false);
        for (const char* panel : {"quadratic", "logistic"}) {
            const ExperimentConfig protocol =
                ExperimentConfig::fromJson(e3.summary.at(panel).at("config"));
            QVERIFY2(same(loadPreset(QString("e3-") + panel).config, protocol), panel);
        }
        const Reproduction e4 = reproduce("E4", true);
        SweepSpec quick = SweepSpec::fromJson(e4.summary.at("sweep"));
        const SweepSpec preset4 = *loadPreset("e4-scaling").sweep;
        for (MethodSpec& m : quick.experiment.methods)
            m.step.gridMin = preset4.experiment.methods[0].step.gridMin;
        QCOMPARE(quick.values, (std::vector<double>{2, 8, 32}));
        for (std::size_t i = 0; i < quick.points(); ++i) {
            const auto at =
                std::find(preset4.values.begin(), preset4.values.end(), quick.values[i]);
            QVERIFY(at != preset4.values.end());
            QVERIFY2(
                same(quick.pointConfig(i),
                     preset4.pointConfig(static_cast<std::size_t>(at - preset4.values.begin()))),
                qPrintable(QString("E4 S = %1").arg(quick.values[i])));
        }
    }
};

QTEST_MAIN(TestPresetLessons)
#include "tst_preset_lessons.moc"
