// Command-line arguments, environment variables and standard output (issue 28): the one
// parser's rules in-process, then each hole the hostile-input campaign found through the real
// binaries.
#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"
#include "cmdline/args.hpp"
#include "cmdline/environment.hpp"
#include "errors.hpp"

using pipelens::ConfigError;
using pipelens::cmdline::commandSpec;
using pipelens::cmdline::parseArgs;

namespace {

// The parser's message for `args` of `command`, or "" when they are accepted.
std::string refusal(const std::string& command, const std::vector<std::string>& args) {
    try {
        (void)parseArgs(commandSpec(command), args);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

void expectParserRefuses(const std::string& command, const std::vector<std::string>& args,
                         const QStringList& fragments) {
    const QString why = QString::fromStdString(refusal(command, args));
    QVERIFY2(!why.isEmpty(), "accepted");
    for (const QString& f : fragments) {
        QVERIFY2(why.contains(f), qPrintable("\"" + f + "\" missing from: " + why));
    }
}

const std::string kSmallConfig = R"({"name": "small", "stages": 2, "batch_size": 5,
  "backend": "cpu", "data": {"rows": 20, "dim": 4}, "budget": {"microbatches": 6},
  "methods": [{"method": "pd", "step_size": 0.1}]})";

}  // namespace

class TestCliArguments : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }
    QString smallConfig() {
        QString file = path("c.json");
        std::ofstream(file.toStdString()) << kSmallConfig;
        return file;
    }

  private slots:
    // ---- the parser, in-process ----

    void parserMissingValueIsNotTakenFromTheNextOption() {
        expectParserRefuses("run", {"c.json", "--out", "--quiet"},
                            {"--out needs a value", "got the option --quiet"});
        expectParserRefuses("run", {"c.json", "--out"}, {"--out needs a value"});
        expectParserRefuses("run", {"c.json", "--out", "-x"}, {"--out=VALUE", "\"-x\""});
        // An empty value is the option's to judge (run: '--out = "" is not allowed').
        QCOMPARE(parseArgs(commandSpec("run"), {"c.json", "--out="}).get("out", "x"),
                 std::string());
        // A value that begins with '-' as --name=-value, a negative number for a numeric option
        // (its range check then judges it).
        QCOMPARE(parseArgs(commandSpec("run"), {"c.json", "--out=-x"}).get("out"),
                 std::string("-x"));
        QCOMPARE(parseArgs(commandSpec("schedule"), {"--stages", "-1"}).get("stages"),
                 std::string("-1"));
    }

    void parserRefusesRepeatsFlagValuesAndStrays() {
        expectParserRefuses("run", {"c.json", "--out", "a", "--out", "b"},
                            {"--out is given twice"});
        expectParserRefuses("run", {"c.json", "--out", "a", "--quiet", "--quiet"},
                            {"--quiet is given twice"});
        expectParserRefuses("run", {"c.json", "--out", "a", "--quiet=0"},
                            {"--quiet is a flag and takes no value", "--quiet=0"});
        expectParserRefuses("schedule", {"--kind", "pd", "extra"},
                            {"unexpected argument \"extra\"", "schedule"});
        expectParserRefuses("run", {"a.json", "b.json", "--out", "x"},
                            {"unexpected argument \"b.json\"", "one config file"});
        // "--" ends the options.
        const auto p = parseArgs(commandSpec("run"), {"--out", "x", "--", "--odd.json"});
        QCOMPARE(p.positional().size(), std::size_t(1));
        QCOMPARE(p.positional()[0], std::string("--odd.json"));
    }

    void parserRefusesOptionsOfAnotherKind() {
        expectParserRefuses("schedule", {"--kind", "fill-drain", "--noam", "2"},
                            {"--noam applies to --kind pd only, not fill-drain"});
        expectParserRefuses("schedule", {"--kind", "pd", "--replicas", "2"},
                            {"--replicas", "localsgd"});
        expectParserRefuses("reproduce", {"E1", "--corpus", "x", "--out", "o"},
                            {"--corpus applies to experiment E5 only, not E1"});
        expectParserRefuses("reproduce", {"all", "--paper-step", "--out", "o"},
                            {"--paper-step applies to experiment E5 only, not all"});
        QVERIFY(
            refusal("reproduce", {"E5", "--corpus", "x", "--paper-step", "--out", "o"}).empty());
    }

    void parserSaysUnknownOptionAndSuggests() {
        expectParserRefuses("sweep", {"s.json", "--out", "o", "--resum"},
                            {"unknown option --resum", "did you mean --resume?"});
        expectParserRefuses("run", {"--frobnicate", "1"}, {"unknown option --frobnicate"});
        expectParserRefuses("run", {"-q"}, {"unknown option -q"});
    }

    void parserEscapesWhatItQuotes() {
        const std::string why = refusal("run", {std::string("--\x1b]0;pwned\x07"), "x"});
        QVERIFY(!why.empty());
        QVERIFY2(why.find('\x1b') == std::string::npos && why.find('\x07') == std::string::npos,
                 why.c_str());
        QVERIFY2(why.find("\\x1b") != std::string::npos, why.c_str());
        QCOMPARE(pipelens::cmdline::shownValue("caf\xc3\xa9"), std::string("caf\xc3\xa9"));
        QCOMPARE(pipelens::cmdline::shownValue("\xc2\x9b"
                                               "2J"),
                 std::string("\\xc2\\x9b2J"));
    }

    // ---- the real binaries ----

    void runOutWithoutValueWritesNothing() {
        const QString cfg = smallConfig();
        const CliResult r = runProgram(QString(PIPELENS_CLI_PATH), {"run", cfg, "--out", "--quiet"},
                                       RunSettings().inFolder(dir_.path()));
        expectRefused(r, {"--out needs a value; got the option --quiet"});
        QVERIFY(!QFileInfo::exists(path("--quiet")));
        expectRefused(runCli({"run", cfg, "--out", path("o"), "--quiet=0"}), {"--quiet is a flag"});
        expectRefused(runCli({"run", cfg, "--out", path("o"), "--out", path("p")}),
                      {"--out is given twice"});
        QVERIFY(!QFileInfo::exists(path("o")) && !QFileInfo::exists(path("p")));
    }

    // --step-rule (issue 30) replaces the rule of every method whose step size is a grid;
    // summary.json names it with every threshold. A bad value is refused before any run.
    void stepRuleOptionReplacesTheGridRule() {
        const QString cfg = path("grid.json");
        std::ofstream(cfg.toStdString()) << R"({"name": "g", "stages": 2, "batch_size": 5,
          "backend": "cpu", "data": {"rows": 20, "dim": 4}, "budget": {"microbatches": 6},
          "methods": [{"method": "pd", "step_size": {"grid": [-3, -1]}},
                      {"method": "pd", "step_size": 0.1}]})";
        const CliResult ok =
            runCli({"run", cfg, "--out", path("rule"), "--quiet", "--step-rule",
                    R"({"kind": "stable", "preset": "notebook", "tail_frac": 0.5})"});
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
        std::ifstream in(path("rule/summary.json").toStdString());
        const nlohmann::json summary = nlohmann::json::parse(in);
        const nlohmann::json& rule = summary.at("methods").at(0).at("step_rule");
        QCOMPARE(rule.at("kind").get<std::string>(), std::string("stable"));
        QCOMPARE(rule.at("preset").get<std::string>(), std::string("notebook"));
        QCOMPARE(rule.at("tail_frac").get<double>(), 0.5);
        QCOMPARE(rule.at("max_cv").get<double>(), 0.15);
        QCOMPARE(summary.at("methods").at(0).at("sweep").size(), size_t{3});
        QVERIFY(summary.at("methods").at(0).at("sweep").at(0).contains("stable"));
        QVERIFY(!summary.at("methods").at(1).contains("step_rule"));  // a fixed step size
        const CliResult named = runCli(
            {"run", cfg, "--out", path("rule2"), "--quiet", "--step-rule", "stable:notebook"});
        QVERIFY2(named.exitCode == 0, qPrintable(named.err));

        expectRefused(runCli({"run", cfg, "--out", path("r3"), "--step-rule", "steady"}),
                      {"--step-rule = \"steady\" is not allowed", "stable:PRESET"});
        expectRefused(runCli({"run", cfg, "--out", path("r3"), "--step-rule", "stable:paper"}),
                      {"--step-rule.preset = \"paper\" is not allowed: one of lm_script, "
                       "notebook"});
        expectRefused(runCli({"run", cfg, "--out", path("r3"), "--step-rule",
                              R"({"kind": "stable", "max_rise": -1})"}),
                      {"--step-rule.max_rise = -1 is not allowed: a finite number >= 0"});
        QVERIFY(!QFileInfo::exists(path("r3")));
        // The sweep takes it over its step_rule; summary.csv names kind and preset.
        const QString sweep = path("sweep.json");
        std::ofstream(sweep.toStdString())
            << R"({"experiment": "grid.json", "axis": {"name": "stages", "values": [2]}})";
        expectRefused(runCli({"sweep", sweep, "--out", path("s3"), "--step-rule", "{"}),
                      {"--step-rule"});
        const CliResult swept = runCli(
            {"sweep", sweep, "--out", path("s"), "--quiet", "--step-rule", "stable:notebook"});
        QVERIFY2(swept.exitCode == 0, qPrintable(swept.err));
        QFile csv(path("s/summary.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QString rows = QString(csv.readAll());
        QVERIFY2(rows.contains(",stable:notebook,") && rows.contains(",fixed,"), qPrintable(rows));
    }

    void commandsRefuseStraysOtherKindsAndTypos() {
        expectRefused(
            runCli({"schedule", "--kind", "pd", "--stages", "2", "--microbatches", "2", "extra"}),
            {"unexpected argument \"extra\""});
        expectRefused(runCli({"schedule", "--kind", "fill-drain", "--stages", "2", "--microbatches",
                              "2", "--noam", "2"}),
                      {"--noam applies to --kind pd only"});
        expectRefused(runCli({"sweep", path("s.json"), "--out", path("s"), "--resum"}),
                      {"unknown option --resum", "did you mean --resume?"});
        expectRefused(runCli({"example", "pd", "extra"}), {"unexpected argument \"extra\""});
        expectRefused(runCli({"devices", "--json=1"}), {"--json is a flag"});
        expectRefused(runCli({"help", "nonsense"}), {"unexpected argument \"nonsense\""});
        expectRefused(runCli({"help", "run", "extra"}), {"unexpected argument \"extra\""});
        const CliResult help = runCli({"help", "run"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains("--out DIR"));
    }

    // --budget-rule overrides the config's budget.rule for run, sweep and animate. PD at S = 2
    // lasts 2N + 2 slots: in 19 slots fit runs N = 8 (18 slots), reach the smallest N reaching
    // 19, N = 9 (20 slots), whole. A refused value names the option, the value and the rules.
    void budgetRuleOptionOverridesTheConfig() {
        nlohmann::json config = ::smallConfig();
        config["budget"] = {{"slots", 19}};
        const std::string file = path("slots.json").toStdString();
        writeFile(file, config.dump());
        auto summaryOf = [&](const QStringList& extra, const QString& out) {
            QStringList args = {"run", QString::fromStdString(file), "--out", path(out), "--quiet"};
            args += extra;
            const CliResult r = runCli(args);
            if (r.exitCode != 0) qWarning("%s", qPrintable(r.err));
            return nlohmann::json::parse(readFile(path(out).toStdString() + "/summary.json"));
        };
        const nlohmann::json reach = summaryOf({"--budget-rule", "reach"}, "reach");
        QCOMPARE(reach["budget_rule"].get<std::string>(), std::string("reach"));
        QCOMPARE(reach["slot_budget"].get<int>(), 19);
        const nlohmann::json& pd = reach["methods"][0];
        QCOMPARE(pd["microbatches"].get<int>(), 9);
        QCOMPARE(pd["slots_run"].get<int>(), 20);
        QCOMPARE(pd["microbatches_finished"].get<int>(), 9);
        QVERIFY(pd["cut_at_slot"].is_null());
        const nlohmann::json fit = summaryOf({}, "fit");
        QCOMPARE(fit["budget_rule"].get<std::string>(), std::string("fit"));
        QCOMPARE(fit["methods"][0]["microbatches"].get<int>(), 8);
        QCOMPARE(fit["methods"][0]["slots_run"].get<int>(), 18);

        const QStringList why = {"--budget-rule = \"cut\" is not allowed",
                                 "one of fit, truncate, reach"};
        expectRefused(runCli({"run", QString::fromStdString(file), "--out", path("bad"),
                              "--budget-rule", "cut"}),
                      why);
        QVERIFY(!QFileInfo::exists(path("bad")));
        const nlohmann::json sweep = {{"name", "tiny"},
                                      {"experiment", config},
                                      {"axis", {{"name", "stages"}, {"values", {2, 3}}}}};
        const std::string sweepFile = path("sweep.json").toStdString();
        writeFile(sweepFile, sweep.dump());
        expectRefused(runCli({"sweep", QString::fromStdString(sweepFile), "--out", path("sw"),
                              "--budget-rule", "cut"}),
                      why);
        QVERIFY(!QFileInfo::exists(path("sw")));
        // The sweep keeps the rule in its stored sweep.json (so --resume must give it again).
        const CliResult swept = runCli({"sweep", QString::fromStdString(sweepFile), "--out",
                                        path("sw"), "--budget-rule", "reach", "--quiet"});
        QVERIFY2(swept.exitCode == 0, qPrintable(swept.err));
        const nlohmann::json stored =
            nlohmann::json::parse(readFile(path("sw").toStdString() + "/sweep.json"));
        QCOMPARE(stored["experiment"]["budget"]["rule"].get<std::string>(), std::string("reach"));
        const CliResult animate = runCli({"animate", QString::fromStdString(file), "--out",
                                          path("a.gif"), "--budget-rule", "cut"});
        if (!animate.err.contains("this build has none")) expectRefused(animate, why);
    }

    // --optimizer sets every method's optimizer; --correctors lands only on the methods that
    // can take it (pd here, not 1f1b's synchronous steps, not rpd for prediction), as the
    // written config.json and the labels show. Refusals name the option and what is allowed.
    void optimizerAndCorrectorOptions() {
        nlohmann::json config = ::smallConfig();
        config["methods"] = nlohmann::json::array({{{"method", "pd"}, {"step_size", 0.05}},
                                                   {{"method", "1f1b"}, {"step_size", 0.05}},
                                                   {{"method", "rpd"}, {"step_size", 0.05}}});
        const std::string file = path("opt.json").toStdString();
        writeFile(file, config.dump());
        const CliResult r =
            runCli({"run", QString::fromStdString(file), "--out", path("opt"), "--quiet",
                    "--optimizer", "adam", "--correctors", "prediction"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const nlohmann::json written =
            nlohmann::json::parse(readFile(path("opt").toStdString() + "/config.json"));
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(written["methods"][i]["optimizer"]["kind"].get<std::string>(),
                     std::string("adam"));
        }
        QCOMPARE(written["methods"][0]["correctors"][0]["kind"].get<std::string>(),
                 std::string("prediction"));
        QVERIFY(!written["methods"][1].contains("correctors"));
        QVERIFY(!written["methods"][2].contains("correctors"));
        const nlohmann::json summary =
            nlohmann::json::parse(readFile(path("opt").toStdString() + "/summary.json"));
        QCOMPARE(summary["methods"][0]["label"].get<std::string>(),
                 std::string("PipeDream + Adam + prediction (exact s)"));
        // JSON forms, and refusals.
        const CliResult json =
            runCli({"run", QString::fromStdString(file), "--out", path("opt2"), "--quiet",
                    "--optimizer", R"({"kind": "momentum", "beta": 0.5})", "--correctors",
                    R"([{"kind": "dc", "lambda": 0.25}])"});
        QVERIFY2(json.exitCode == 0, qPrintable(json.err));
        const nlohmann::json written2 =
            nlohmann::json::parse(readFile(path("opt2").toStdString() + "/config.json"));
        QCOMPARE(written2["methods"][0]["optimizer"]["beta"].get<double>(), 0.5);
        QCOMPARE(written2["methods"][2]["correctors"][0]["lambda"].get<double>(), 0.25);
        expectRefused(runCli({"run", QString::fromStdString(file), "--out", path("bad"),
                              "--correctors", "bogus"}),
                      {"--correctors = \"bogus\" is not allowed",
                       "\"none\", one of "
                       "delay_adaptive"});
        expectRefused(runCli({"run", QString::fromStdString(file), "--out", path("bad"),
                              "--optimizer", R"({"kind": "adam", "beta1": 1})"}),
                      {"--optimizer.beta1 = 1 is not allowed: a number in [0, 1)"});
        config["methods"] = nlohmann::json::array({{{"method", "1f1b"}, {"step_size", 0.05}}});
        writeFile(file, config.dump());
        expectRefused(runCli({"run", QString::fromStdString(file), "--out", path("bad"),
                              "--correctors", "dc"}),
                      {"--correctors = \"dc\" is not allowed here: no method"});
        QVERIFY(!QFileInfo::exists(path("bad")));
    }

    void deviceValueIsEscaped() {
        const CliResult r =
            runCli({"run", smallConfig(), "--out", path("d"), "--device", "x\x1b]0;pwned\x07"});
        expectRefused(r, {"--device", "\\x1b]0;pwned\\x07"});
        QVERIFY(!r.rawErr.contains('\x1b') && !r.rawErr.contains('\x07'));
        // Messages built elsewhere (here the config reader's) are escaped on the way out too.
        const CliResult c = runCli({"run", path("x\x1b]0;t\x07.json"), "--out", path("e")});
        expectRefused(c, {"\\x1b]0;t\\x07"});
        QVERIFY(!c.rawErr.contains('\x1b') && !c.rawErr.contains('\x07'));
    }

    void reproduceRefusesLikeRun() {
        if (!QFileInfo::exists(QFileInfo(PIPELENS_CLI_PATH).dir().filePath("pipelens-reproduce"))) {
            QSKIP("no reproduce in this build (PIPELENS_BUILD_UI=OFF)");
        }
        expectRefused(runCli({"reproduce", "E1", "--corpus", "x", "--out", path("r")}),
                      {"--corpus applies to experiment E5 only, not E1"});
        expectRefused(runCli({"reproduce", "E1", "--out", "--quick"}),
                      {"--out needs a value; got the option --quick"});
        // A bad --out: run's exit code and wording, before anything runs.
        std::ofstream(path("file").toStdString()) << "x";
        const CliResult run = runCli({"run", smallConfig(), "--out", path("file")});
        const CliResult rep = runCli({"reproduce", "E1", "--quick", "--out", path("file")});
        expectRefused(run, {"--out"});
        expectRefused(rep, {"--out"});
        QCOMPARE(rep.err, run.err);
    }

    void appRefusesStrayArguments() {
#ifdef PIPELENS_APP_PATH
        // A private runtime folder keeps Qt's warning about a missing one off stderr.
        const QStringList env{"XDG_RUNTIME_DIR=" + dir_.path()};
        const CliResult r =
            runProgram(PIPELENS_APP_PATH, {"stray.json"}, RunSettings().withEnv(env));
        expectRefused(r, {"unexpected argument \"stray.json\""});
        expectRefused(runProgram(PIPELENS_APP_PATH, {"--config", "--preset", "x"},
                                 RunSettings().withEnv(env)),
                      {"--config needs a value"});
        expectRefused(runProgram(PIPELENS_APP_PATH, {"--scale", "2", "--scale", "3"},
                                 RunSettings().withEnv(env)),
                      {"--scale is given twice"});
        const CliResult p = runProgram(PIPELENS_APP_PATH, {"--preset", "x\x1b]0;t\x07"},
                                       RunSettings().withEnv(env));
        expectRefused(p, {"--preset", "\\x1b"});
        QVERIFY(!p.rawErr.contains('\x1b'));
#else
        QSKIP("no desktop app in this build");
#endif
    }

    // A server with no display: --help and --version answer (they used to abort with "could not
    // connect to display"), a screenshot is drawn offscreen, and a plain start says what to do.
    void appWithoutDisplay() {
#ifdef PIPELENS_APP_PATH
        const QStringList env{
            "DISPLAY=", "WAYLAND_DISPLAY=", "QT_QPA_PLATFORM=", "XDG_RUNTIME_DIR=" + dir_.path()};
        const CliResult help =
            runProgram(PIPELENS_APP_PATH, {"--help"}, RunSettings().withEnv(env));
        QVERIFY2(!help.crashed && help.exitCode == 0, qPrintable(help.err));
        QVERIFY2(help.out.contains("--screenshot"), qPrintable(help.out));
        const CliResult version =
            runProgram(PIPELENS_APP_PATH, {"--version"}, RunSettings().withEnv(env));
        QVERIFY2(!version.crashed && version.exitCode == 0, qPrintable(version.err));
        QVERIFY2(version.out.startsWith("PipeLens "), qPrintable(version.out));
        const QString shot = dir_.filePath("headless.png");
        const CliResult screenshot =
            runProgram(PIPELENS_APP_PATH, {"--screenshot", shot, "--size", "800x600"},
                       RunSettings().withEnv(env));
        QVERIFY2(!screenshot.crashed && screenshot.exitCode == 0, qPrintable(screenshot.err));
        QVERIFY2(screenshot.err.isEmpty(), qPrintable(screenshot.err));  // no platform noise
        QVERIFY(QFileInfo(shot).size() > 10000);
        const CliResult plain = runProgram(PIPELENS_APP_PATH, {}, RunSettings().withEnv(env));
        QVERIFY(!plain.crashed);
        QCOMPARE(plain.exitCode, 1);
        QVERIFY2(plain.err.contains("no display") && plain.err.contains("--figures"),
                 qPrintable(plain.err));
#else
        QSKIP("no desktop app in this build");
#endif
    }

    void outputWriteErrorsFail() {
        if (!QFileInfo::exists("/dev/full")) QSKIP("no /dev/full");
        const QList<QStringList> commands{
            {"example", "pd"},
            {"schedule", "--kind", "pd", "--stages", "2", "--microbatches", "2"},
            {"delays", "--stages", "2"},
            {"devices"},
            {"help"},
            {"run", "--help"}};
        for (const QStringList& c : commands) {
            const CliResult r =
                runProgram(QString(PIPELENS_CLI_PATH), c, RunSettings().stdoutTo("/dev/full"));
            QVERIFY2(!r.crashed, qPrintable(c.join(' ')));
            QVERIFY2(r.exitCode == 2,
                     qPrintable(c.join(' ') + QString(": exit %1").arg(r.exitCode)));
            QVERIFY2(r.err ==
                         "pipelens-cli: cannot write to standard output: No space left on "
                         "device\n",
                     qPrintable(c.join(' ') + ": " + r.err));
        }
    }

    void badEnvironmentValuesAreRefusedAtStartUp() {
        const QStringList schedule{"schedule", "--kind",         "pd", "--stages",
                                   "2",        "--microbatches", "2"};
        expectRefused(runCli(schedule, {"PIPELENS_MEMORY_LIMIT=99999999T"}),
                      {"PIPELENS_MEMORY_LIMIT", "99999999T", "K, M, G or T"});
        const QStringList bad{"PIPELENS_MEMORY_LIMIT=8X",
                              "PIPELENS_PROGRESS_AFTER_MS=soon",
                              "PIPELENS_AUTO_OPENCL_MIN_WORK=-1",
                              "PIPELENS_AUTO_LM_MIN_FLOPS=1e13x",
                              "PIPELENS_CL_PROFILE=yes",
                              "PIPELENS_CL_STAGE_QUEUES=2",
                              "PIPELENS_CLBLAST_TUNING=of",
                              "PIPELENS_LM_KERNELS=portabel",
                              QString("PIPELENS_CACHE_DIR=/tmp/a\x1b]0;t\x07")};
        for (const QString& kv : bad) {
            const QString name = kv.section('=', 0, 0);
            const CliResult r = runCli(schedule, {kv});
            expectRefused(r, {name, "is not allowed"});
            QVERIFY(!r.rawErr.contains('\x1b'));
        }
        // Good values pass.
        QCOMPARE(runCli(schedule, {"PIPELENS_MEMORY_LIMIT=8G", "PIPELENS_CL_PROFILE=0",
                                   "PIPELENS_LM_KERNELS=portable"})
                     .exitCode,
                 0);
    }

    void memoryLimitOverflowIsRefusedInProcess() {
        qputenv("PIPELENS_MEMORY_LIMIT", "99999999T");
        QVERIFY_THROWS_EXCEPTION(ConfigError, pipelens::environmentMemoryLimit());
        qputenv("PIPELENS_MEMORY_LIMIT", "16777215T");
        QCOMPARE(pipelens::environmentMemoryLimit().value(), std::uint64_t(16777215) << 40);
        qunsetenv("PIPELENS_MEMORY_LIMIT");
        QVERIFY(!pipelens::environmentMemoryLimit().has_value());
    }

    void delaysWindowWithoutSamplesIsRefused() {
        expectRefused(runCli({"delays", "--stages", "2", "--from", "0.9999999999"}),
                      {"--from", "0.9999999999", "no samples", "at most 0.975"});
        expectRefused(runCli({"delays", "--stages", "2", "--microbatches", "1", "--from", "0.6"}),
                      {"--from", "at most 0.5"});
        // The largest value named works.
        const CliResult ok = runCli({"delays", "--stages", "2", "--from", "0.975", "--json"});
        QCOMPARE(ok.exitCode, 0);
        const auto j = nlohmann::json::parse(ok.out.toStdString());
        QVERIFY(j.at(0).at("samples").get<long long>() > 0);
    }
};

QTEST_GUILESS_MAIN(TestCliArguments)
#include "tst_cli_arguments.moc"
