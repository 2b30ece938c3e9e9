// PyTorch's pipeline schedule CSV (../shared/INTEROP.md): what real files hold parses (several
// stages per rank in interleaved and V-shaped placements, full and split backwards in one file,
// overlapped pairs, compute + comms files, CRLF), summaries against hand counts and 1F1B's
// closed forms, every refusal with its rank, step, cell and hint, and the round trip
// parse(export(p)) == p for hand-made programs and every flushing family.
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "errors.hpp"
#include "expect_error.hpp"
#include "schedule/flush_family.hpp"
#include "schedule/program.hpp"
#include "schedule/pytorch_csv.hpp"

using namespace pipelens;

namespace {

Action act(ActionKind kind, int stage, int microbatch) {
    return Action{kind, stage, microbatch};
}
Action F(int s, int m) {
    return act(ActionKind::Forward, s, m);
}
Action B(int s, int m) {
    return act(ActionKind::Backward, s, m);
}
Action I(int s, int m) {
    return act(ActionKind::InputGrad, s, m);
}
Action W(int s, int m) {
    return act(ActionKind::WeightGrad, s, m);
}

ProgramStep one(const Action& a) {
    ProgramStep step;
    step.actions[0] = a;
    step.count = 1;
    return step;
}

PipelineProgram parse(const std::string& text) {
    return parsePytorchScheduleCsv(text, "t.csv");
}

bool sameProgram(const PipelineProgram& a, const PipelineProgram& b) {
    return a.ranks == b.ranks && a.ignoredActions == b.ignoredActions && a.orderOnly == b.orderOnly;
}

// An independent unit-cost timing, written for this test: each rank runs its order as soon as
// its dependencies (F after the previous stage's F, B or I after the next stage's B or I and
// after its own F, W after its I) have ended; the program holds each action at its start step.
PipelineProgram timeOrders(const std::vector<std::vector<Action>>& orders) {
    std::map<std::tuple<int, int, int>, int> end;  // (kind, stage, microbatch) -> end step
    auto endOf = [&](ActionKind k, int s, int m) {
        const auto it = end.find({static_cast<int>(k), s, m});
        return it == end.end() ? -1 : it->second;
    };
    int stages = 0;
    for (const auto& row : orders) {
        for (const Action& a : row) stages = std::max(stages, a.stage + 1);
    }
    PipelineProgram program;
    program.ranks.resize(orders.size());
    std::vector<std::size_t> next(orders.size(), 0);
    std::vector<int> freeAt(orders.size(), 0);
    bool progress = true;
    while (progress) {
        progress = false;
        for (std::size_t r = 0; r < orders.size(); ++r) {
            while (next[r] < orders[r].size()) {
                const Action& a = orders[r][next[r]];
                int ready = freeAt[r];
                std::vector<int> deps;
                if (a.kind == ActionKind::Forward) {
                    if (a.stage > 0)
                        deps.push_back(endOf(ActionKind::Forward, a.stage - 1, a.microbatch));
                } else if (a.kind == ActionKind::WeightGrad) {
                    deps.push_back(endOf(ActionKind::InputGrad, a.stage, a.microbatch));
                } else {
                    deps.push_back(endOf(ActionKind::Forward, a.stage, a.microbatch));
                    if (a.stage + 1 < stages) {
                        deps.push_back(
                            std::max(endOf(ActionKind::Backward, a.stage + 1, a.microbatch),
                                     endOf(ActionKind::InputGrad, a.stage + 1, a.microbatch)));
                    }
                }
                if (std::any_of(deps.begin(), deps.end(), [](int d) { return d < 0; })) break;
                for (const int d : deps) ready = std::max(ready, d);
                auto& row = program.ranks[r];
                row.resize(static_cast<std::size_t>(ready) + 1);
                row[static_cast<std::size_t>(ready)] = one(a);
                end[{static_cast<int>(a.kind), a.stage, a.microbatch}] = ready + 1;
                freeAt[r] = ready + 1;
                ++next[r];
                progress = true;
            }
        }
    }
    for (std::size_t r = 0; r < orders.size(); ++r) {
        if (next[r] != orders[r].size()) program.ranks.clear();  // a deadlock: no program
    }
    return program;
}

// 1F1B with flush by SPEC 2.1's rule, one stage per rank: min(S − s − 1, M) warm-up forwards,
// then one forward and one backward while forwards remain, then the remaining backwards. Stages
// in `split` run I then W instead of B.
std::vector<std::vector<Action>> oneFOneB(int S, int M, const std::vector<bool>& split = {}) {
    std::vector<std::vector<Action>> orders(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
        auto& o = orders[static_cast<std::size_t>(s)];
        const bool splitHere = !split.empty() && split[static_cast<std::size_t>(s)];
        auto backward = [&](int m) {
            if (splitHere) {
                o.push_back(I(s, m));
                o.push_back(W(s, m));
            } else {
                o.push_back(B(s, m));
            }
        };
        const int warm = std::min(S - s - 1, M);
        int f = 0;
        int b = 0;
        for (; f < warm; ++f) o.push_back(F(s, f));
        while (f < M) {
            o.push_back(F(s, f++));
            backward(b++);
        }
        while (b < M) backward(b++);
    }
    return orders;
}

std::string sourceFile(const std::string& relative) {
    return std::string(PIPELENS_SOURCE_DIR) + "/" + relative;
}

const char* const kInteropExample = "0F0,0F1,,0B0,,0B1\n,1F0,1B0,1F1,1B1\n";

}  // namespace

class TestPytorchCsv : public QObject {
    Q_OBJECT

  private slots:
    // INTEROP.md's example: 1F1B at S = 2, M = 2; length 2(M + S − 1) = 6, bubble
    // (S − 1)/(M + S − 1) = 1/3 = 4 idle rank-steps of 12 (rank 0 at its steps 2 and 4, rank 1
    // at step 0 and after its row ends at step 5).
    void interopExample() {
        const PipelineProgram p = parse(kInteropExample);
        QCOMPARE(p.ranks.size(), std::size_t{2});
        QCOMPARE(p.ranks[0].size(), std::size_t{6});
        QCOMPARE(p.ranks[1].size(), std::size_t{5});
        QVERIFY(p.ranks[0][2].idle());
        QVERIFY(p.ranks[1][0].idle());
        QCOMPARE(p.ranks[0][3], one(B(0, 0)));
        QCOMPARE(p.ranks[1][3], one(F(1, 1)));
        QCOMPARE(p.ignoredActions, 0LL);
        QVERIFY(!p.orderOnly);
        const ProgramSummary s = summarizeProgram(p);
        QCOMPARE(s.ranks, 2);
        QCOMPARE(s.stages, 2);
        QCOMPARE(s.microbatches, 2);
        QCOMPARE(s.lengthSteps, 6LL);
        QCOMPARE(s.actions, 8LL);
        QCOMPARE(s.bubbleFraction, 4.0 / 12.0);
        QCOMPARE(s.stageRank, (std::vector<int>{0, 1}));
        QCOMPARE(s.peakActivations, (std::vector<int>{2, 1}));
        QVERIFY(!s.splitBackward);
        QCOMPARE(pytorchScheduleCsv(p), std::string(kInteropExample));
    }

    // CRLF (what Python's csv writer emits), blanks around cells, a byte order mark, quoted
    // cells, no final newline: the same program.
    void lineEndingsAndBlanks() {
        const PipelineProgram plain = parse(kInteropExample);
        for (const char* text :
             {"0F0,0F1,,0B0,,0B1\r\n,1F0,1B0,1F1,1B1\r\n", "0F0,0F1,,0B0,,0B1\n,1F0,1B0,1F1,1B1",
              "\xEF\xBB\xBF 0F0 ,\t0F1, , 0B0,,0B1 \r\n,1F0,\"1B0\",1F1,1B1",
              "0F0,0F1,,0B0,,0B1\r\n,1F0,1B0,1F1,1B1\r\n"}) {
            QVERIFY2(sameProgram(parse(text), plain), text);
        }
    }

    // Interleaved placement, P = 2: rank r holds stages r and r + P (hand-timed, GPipe order
    // over chunks). Length 10, 16 busy of 20 rank-steps, two activations per stage at most.
    void interleavedPlacement() {
        const PipelineProgram p = parse(
            "0F0,0F1,2F0,2F1,,,2B0,2B1,0B0,0B1\n"
            ",1F0,1F1,3F0,3F1,3B0,3B1,1B0,1B1\n");
        const ProgramSummary s = summarizeProgram(p);
        QCOMPARE(s.stages, 4);
        QCOMPARE(s.microbatches, 2);
        QCOMPARE(s.stageRank, (std::vector<int>{0, 1, 0, 1}));
        QCOMPARE(s.lengthSteps, 10LL);
        QCOMPARE(s.bubbleFraction, 4.0 / 20.0);
        QCOMPARE(s.peakActivations, (std::vector<int>{2, 2, 2, 2}));
    }

    // The shipped V-shaped example (rank r holds r and 2P − 1 − r, P = 2), with overlapped
    // pairs on both ranks and stage 0's microbatch 0 split into I and W. Counts by hand: 33
    // actions (2·4·4 + the extra W), busy steps 15 + 14 of 2 × 16, peaks 4, 2, 2, 1.
    void vShapeExample() {
        const PipelineProgram p =
            readPytorchScheduleCsv(sourceFile("examples/schedules/v_shape_overlap.csv"));
        const ProgramSummary s = summarizeProgram(p);
        QCOMPARE(s.ranks, 2);
        QCOMPARE(s.stages, 4);
        QCOMPARE(s.microbatches, 4);
        QCOMPARE(s.stageRank, (std::vector<int>{0, 1, 1, 0}));
        QCOMPARE(s.lengthSteps, 16LL);
        QCOMPARE(s.actions, 33LL);
        QCOMPARE(s.bubbleFraction, 3.0 / 32.0);
        QVERIFY(s.splitBackward);
        QCOMPARE(s.peakActivations, (std::vector<int>{4, 2, 2, 1}));
        int pairs = 0;
        for (const auto& row : p.ranks) {
            for (const ProgramStep& step : row) pairs += step.count == 2 ? 1 : 0;
        }
        QCOMPARE(pairs, 4);
        ProgramStep pair;
        pair.actions = {F(0, 3), B(3, 1)};
        pair.count = 2;
        QCOMPARE(p.ranks[0][6], pair);
        QCOMPARE(stepName(pair), std::string("(0F3;3B1)OVERLAP_F_B"));
    }

    // Full backwards on stage 0 and I + W on stage 1 in one file: stage 1 holds each activation
    // until its W, so two at once (one with a full B in the same places).
    void mixedFullAndSplitBackward() {
        const PipelineProgram p = parse("0F0,0F1,,0B0,,0B1\n,1F0,1I0,1F1,1I1,1W0,1W1\n");
        const ProgramSummary s = summarizeProgram(p);
        QVERIFY(s.splitBackward);
        QCOMPARE(s.lengthSteps, 7LL);
        QCOMPARE(s.actions, 10LL);
        QCOMPARE(s.bubbleFraction, 4.0 / 14.0);
        QCOMPARE(s.peakActivations, (std::vector<int>{2, 2}));
    }

    // An overlapped pair in either order (PyTorch writes F first), kept as written.
    void overlapPairEitherOrder() {
        for (const bool forwardFirst : {true, false}) {
            const std::string pair =
                forwardFirst ? "(1F1;1B0)OVERLAP_F_B" : "( 1B0 ; 1F1 )OVERLAP_F_B";
            const PipelineProgram p = parse("0F0,0F1,,0B0,0B1\n,1F0," + pair + ",1B1\n");
            const ProgramStep& step = p.ranks[1][2];
            QCOMPARE(step.count, 2);
            QCOMPARE(step.actions[0], forwardFirst ? F(1, 1) : B(1, 0));
            QCOMPARE(step.actions[1], forwardFirst ? B(1, 0) : F(1, 1));
            const ProgramSummary s = summarizeProgram(p);
            QCOMPARE(s.lengthSteps, 5LL);
            QCOMPARE(s.actions, 8LL);
            QCOMPARE(s.bubbleFraction, 3.0 / 10.0);  // the pair is one busy step
            QCOMPARE(s.peakActivations, (std::vector<int>{2, 2}));
        }
    }

    // A compute + comms file: the 7 communication and sharding cells per rank are counted and
    // dropped, the rows become orders, and the unit-cost timing is INTEROP's example again.
    void computeAndCommsFile() {
        const PipelineProgram p = parse(
            "0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0RESHARD,0REDUCE_GRAD\n"
            "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1,1RESHARD,"
            "1REDUCE_GRAD\n");
        QCOMPARE(p.ignoredActions, 14LL);
        QVERIFY(p.orderOnly);
        QCOMPARE(p.ranks[0], (std::vector<ProgramStep>{one(F(0, 0)), one(F(0, 1)), one(B(0, 0)),
                                                       one(B(0, 1))}));
        QCOMPARE(p.ranks[1], (std::vector<ProgramStep>{one(F(1, 0)), one(B(1, 0)), one(F(1, 1)),
                                                       one(B(1, 1))}));
        const ProgramSummary s = summarizeProgram(p);
        QCOMPARE(s.lengthSteps, 6LL);
        QCOMPARE(s.bubbleFraction, 4.0 / 12.0);
        QCOMPARE(s.stageRank, (std::vector<int>{0, 1}));
        QCOMPARE(s.peakActivations, (std::vector<int>{2, 1}));
        QCOMPARE(pytorchScheduleCsv(p), std::string(kInteropExample));
    }

    // 1F1B with flush built by SPEC 2.1's rule and timed by this test's own timing: the length
    // 2(M + S − 1), the bubble (S − 1)/(M + S − 1) and at most min(S − s, M) activations on
    // stage s (from 0); its CSV gives back the same program; with odd stages split into I + W
    // it stays valid and round-trips too.
    void oneFOneBClosedFormsAndRoundTrip() {
        for (int S = 1; S <= 6; ++S) {
            for (int M = 1; M <= 9; ++M) {
                const PipelineProgram p = timeOrders(oneFOneB(S, M));
                QVERIFY(!p.ranks.empty());
                validateProgram(p);
                const ProgramSummary s = summarizeProgram(p);
                QCOMPARE(s.lengthSteps, 2LL * (M + S - 1));
                QVERIFY(qAbs(s.bubbleFraction - double(S - 1) / (M + S - 1)) < 1e-12);
                for (int st = 0; st < S; ++st) {
                    QCOMPARE(s.peakActivations[static_cast<std::size_t>(st)], std::min(S - st, M));
                    QCOMPARE(s.stageRank[static_cast<std::size_t>(st)], st);
                }
                const std::string csv = pytorchScheduleCsv(p);
                QVERIFY(sameProgram(parse(csv), p));
                std::vector<bool> split(static_cast<std::size_t>(S));
                for (int st = 0; st < S; ++st) split[static_cast<std::size_t>(st)] = st % 2 == 1;
                const PipelineProgram q = timeOrders(oneFOneB(S, M, split));
                QVERIFY(!q.ranks.empty());
                validateProgram(q);
                QCOMPARE(summarizeProgram(q).splitBackward, S > 1);
                QVERIFY(sameProgram(parse(pytorchScheduleCsv(q)), q));
            }
        }
    }

    // Every program of the flushing family (helper B's buildFlushProgram) at several S and M:
    // its CSV gives back the same program, and the summary of the import agrees with the
    // family's closed forms.
    void flushFamilyRoundTrip() {
        for (const FlushKind kind : {FlushKind::GPipe, FlushKind::OneFOneB, FlushKind::Interleaved,
                                     FlushKind::ZeroBubbleH1}) {
            for (const int S : {1, 2, 3, 4, 8}) {
                for (const int M : {1, 2, 3, 4, 8, 16}) {
                    FlushScheduleParams params;
                    params.kind = kind;
                    params.devices = S;
                    params.microbatches = M;
                    params.virtualStages = kind == FlushKind::Interleaved ? 2 : 1;
                    if (kind == FlushKind::Interleaved && M % S != 0) continue;
                    const PipelineProgram p = buildFlushProgram(params);
                    const std::string csv = pytorchScheduleCsv(p);
                    const PipelineProgram back = parse(csv);
                    const QByteArray what = QByteArray::fromStdString(flushKindName(kind)) +
                                            " S=" + QByteArray::number(S) +
                                            " M=" + QByteArray::number(M);
                    QVERIFY2(sameProgram(back, p), what.constData());
                    QCOMPARE(pytorchScheduleCsv(back), csv);
                    const ProgramSummary s = summarizeProgram(back);
                    QVERIFY2(s.lengthSteps == flushLengthFormula(params), what.constData());
                    QVERIFY2(qAbs(s.bubbleFraction - flushBubbleFormula(params)) < 1e-12,
                             what.constData());
                    QCOMPARE(s.ranks, S);
                    QCOMPARE(s.microbatches, M);
                }
            }
        }
    }

    // Hand-made programs (not parsed): validate, export, import, equal.
    void handMadeRoundTrip() {
        PipelineProgram p;
        ProgramStep pair;
        pair.actions = {B(1, 0), F(1, 1)};
        pair.count = 2;
        p.ranks = {{one(F(0, 0)), one(F(0, 1)), {}, one(B(0, 0)), one(B(0, 1)), {}, {}},
                   {{}, one(F(1, 0)), pair, one(B(1, 1)), {}}};
        validateProgram(p);
        const std::string csv = pytorchScheduleCsv(p);
        QCOMPARE(csv, std::string("0F0,0F1,,0B0,0B1,,\n,1F0,(1B0;1F1)OVERLAP_F_B,1B1,\n"));
        QVERIFY(sameProgram(parse(csv), p));
    }

    // An exported order-only program is its timing: a compute-only file (columns are times)
    // with each rank's actions in the same order.
    void orderOnlyExportIsItsTiming() {
        const PipelineProgram p =
            parse("0F0,0RECV_B0,0F1,0B0,0B1\n1RECV_F0,1F0,1B0,1RECV_F1,1F1,1B1\n");
        const PipelineProgram timed = parse(pytorchScheduleCsv(p));
        QVERIFY(!timed.orderOnly);
        for (std::size_t r = 0; r < p.ranks.size(); ++r) {
            std::vector<ProgramStep> busy;
            for (const ProgramStep& step : timed.ranks[r]) {
                if (!step.idle()) busy.push_back(step);
            }
            QCOMPARE(busy, p.ranks[r]);
        }
    }

    void refusals_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QStringList>("fragments");
        auto row = [](const char* name, const char* text, const QStringList& fragments) {
            QTest::newRow(name) << QByteArray(text) << fragments;
        };
        row("unknown type", "0F0,0X0",
            {"rank 0 (row 0), step 1 (column 1)", "cell '0X0'", "unknown action type 'X'",
             "allowed are F, B, I, W"});
        row("lower case", "0F0,0B0\n1f0", {"rank 1 (row 1)", "cell '1f0'", "upper case"});
        row("no stage", "F0", {"cell 'F0'", "starts with its stage number"});
        row("no type", "12", {"cell '12'", "expected an action type"});
        row("bad microbatch", "0F0,0B-1", {"cell '0B-1'", "unexpected text after the action"});
        row("decimal microbatch", "0F1.5", {"cell '0F1.5'", "unexpected text"});
        row("F without microbatch", "0F", {"cell '0F'", "F needs a microbatch number", "e.g. 2F0"});
        row("W without microbatch", "0F0,0I0,0W", {"column 2", "W needs a microbatch"});
        row("RECV without microbatch", "0RECV_F,0F0,0B0", {"RECV_F needs a microbatch"});
        row("UNSHARD with microbatch", "0UNSHARD3,0F0,0B0",
            {"cell '0UNSHARD3'", "UNSHARD takes no microbatch", "0UNSHARD"});
        row("older BW", "0F0,,2BW0\n,1F0",
            {"rank 0 (row 0), step 2 (column 2)", "cell '2BW0'",
             "the full backward is now spelled B (e.g. 2B0); BW is the older spelling"});
        row("older B then W", "0F0,0B0,0W0",
            {"rank 0 (row 0), step 2 (column 2)", "cell '0W0'", "a W after a full backward B",
             "in the current spelling the input-gradient backward is I (e.g. 2I0), B is the full "
             "backward"});
        row("W before a full B", "0F0,0W0,0B0", {"cell '0W0'", "a W with a full backward B"});
        row("stage on two ranks", "0F0,,0B0\n,0F1,,0B1",
            {"rank 1 (row 1), step 1 (column 1)", "cell '0F1'", "stage 0 is on two ranks, rank 0",
             "and rank 1"});
        row("B before F", "0B0,0F0",
            {"step 0 (column 0)", "cell '0B0'", "a backward before its forward 0F0"});
        row("I before F", "0I0,0F0,0W0", {"cell '0I0'", "a backward before its forward 0F0"});
        row("B in F's step", "(0F0;0B0)OVERLAP_F_B", {"a backward before its forward 0F0"});
        row("B without F", "0F1,0B1,0B0", {"cell '0B0'", "a backward with no forward 0F0"});
        row("W before I", "0F0,0W0,0I0", {"cell '0W0'", "a W before its I"});
        row("W without I", "0F0,0W0", {"cell '0W0'", "no input-gradient backward 0I0"});
        row("I without W", "0F0,0I0", {"cell '0I0'", "a split backward needs both I and W"});
        row("B and I", "0F0,0I0,0B0,0W0", {"cell '0B0'", "both a full backward B and an input"});
        row("F without backward", "0F0,0F1,0B1",
            {"cell '0F0'", "a forward with no backward", "add 0B0, or 0I0 and 0W0"});
        row("missing microbatch", "0F0,0F1,0F3,0B0,0B1,0B3\n1F0,1F1,1F2,1F3,1B0,1B1,1B2,1B3",
            {"stage 0 (rank 0) has no microbatch 2", "microbatches 0 … 3 appear elsewhere"});
        row("missing microbatch 0", "0F5,0B5",
            {"stage 0 (rank 0) has no microbatch 0", "microbatches 0 … 5"});
        row("missing stage", "0F0,,,0B0\n,2F0,2B0",
            {"stage 1 has no actions", "stages 0 … 2 appear"});
        row("repeated", "0F0,0F0,0B0",
            {"step 1 (column 1)", "repeats 0F0 (first at rank 0 (row 0), step 0 (column 0))"});
        row("forward too early", "0F0,,0B0\n1F0,1B0",
            {"rank 1 (row 1), step 0 (column 0)", "cell '1F0'",
             "strictly after 0F0 of the previous stage"});
        row("backward too early", "0F0,,0B0\n,1F0,,1B0",
            {"rank 0 (row 0), step 2 (column 2)", "cell '0B0'",
             "strictly after 1B0 of the next stage"});
        row("pair of forwards", "(0F0;0F1)OVERLAP_F_B,0B0,0B1",
            {"cell '(0F0;0F1)OVERLAP_F_B'", "one forward F and one backward B or I"});
        row("pair with W", "0F0,0I0,(0F1;0W0)OVERLAP_F_B",
            {"one forward F and one backward B or I"});
        row("pair with comms", "(0F0;0SEND_F0)OVERLAP_F_B", {"one forward F and one backward"});
        row("pair of one", "(0F0)OVERLAP_F_B", {"exactly two actions"});
        row("pair of three", "(0F0;0B0;0F1)OVERLAP_F_B", {"exactly two actions"});
        row("pair unclosed", "(0F0;0B0)", {"written (a;b)OVERLAP_F_B"});
        row("pair without parens", "0OVERLAP_F_B", {"written (a;b)OVERLAP_F_B"});
        row("stage too large", "1000001F0", {"the stage 1000001 is more than 1000000"});
        row("microbatch too large", "0F99999999999999999999999",
            {"the microbatch 99999999999999999999999 is more than 1000000"});
        row("empty file", "", {"is empty"});
        row("blank file", " \r\n\n", {"is empty"});
        row("empty rank", "0F0,0B0\n\n1F0", {"rank 1 (row 1) has no actions"});
        row("idle rank", ",,\n0F0,0B0", {"rank 0 (row 0) has no actions"});
        row("trailing blank line", "0F0,0B0\n\n",
            {"rank 1 (row 1) has no actions", "an empty line, also one at the end"});
        row("lone CR", "0F0\r0B0", {"carriage return"});
        row("column after dropped cells", "0UNSHARD,0F0,0X0", {"step 1 (column 2)", "cell '0X0'"});
        row("order check names the file column", "0UNSHARD,0B0,0F0",
            {"rank 0 (row 0), step 0 (column 1)", "cell '0B0'", "before its forward"});
        row("comms deadlock", "0F0,0RECV_B0,0B0,0F1,0B1\n1RECV_F1,1F1,1F0,1B0,1B1", {"cannot run"});
        row("raw bytes escaped", "0F0,0\x01\xff", {"\\x01\\xff"});
    }

    void refusals() {
        QFETCH(QByteArray, text);
        QFETCH(QStringList, fragments);
        fragments << "schedule CSV 't.csv'";
        expectError<ConfigError>([&] { (void)parse(text.toStdString()); }, fragments);
    }

    // validateProgram on hand-made grids: a step with three actions, a pair of two forwards.
    void handMadeRefusals() {
        PipelineProgram p;
        ProgramStep three;
        three.count = 3;
        p.ranks = {{three}};
        expectError<ConfigError>([&] { validateProgram(p); },
                                 {"rank 0 (row 0), step 0 (column 0)", "holds 3 actions"});
        ProgramStep twoF;
        twoF.actions = {F(0, 0), F(0, 1)};
        twoF.count = 2;
        p.ranks = {{twoF, one(B(0, 0)), one(B(0, 1))}};
        expectError<ConfigError>([&] { validateProgram(p); },
                                 {"cell '(0F0;0F1)OVERLAP_F_B'", "overlapped pair of one forward"});
        p.ranks = {};
        expectError<ConfigError>([&] { validateProgram(p); }, {"no ranks"});
    }

    // Reading: the file reader's refusals (missing, a folder) name the path.
    void readingFiles() {
        const std::string missing = sourceFile("examples/schedules/no-such-file.csv");
        expectError<ConfigError>([&] { (void)readPytorchScheduleCsv(missing); },
                                 {"no-such-file.csv", "does not exist"});
        expectError<ConfigError>(
            [&] { (void)readPytorchScheduleCsv(sourceFile("examples/schedules")); }, {"folder"});
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("bad.csv").toStdString();
        {
            std::ofstream out(path, std::ios::binary);
            out << "0F0,0F1,,0B0,,0B1\r\n,1F0,1B0,1F1,2BW1\r\n";
        }
        expectError<ConfigError>([&] { (void)readPytorchScheduleCsv(path); },
                                 {"bad.csv", "rank 1 (row 1), step 4 (column 4)", "'2BW1'"});
    }

    // The shared reader gives one program for one text (a plan reads its file at every edit),
    // a new one as soon as the file's text changes, and refuses what the plain reader refuses.
    void sharedReadsFollowTheFile() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("s.csv").toStdString();
        auto write = [&](const char* text) {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out << text;
        };
        write("0F0,0F1,,0B0,,0B1\n,1F0,1B0,1F1,1B1\n");
        const auto a = readPytorchScheduleCsvShared(path);
        const auto b = readPytorchScheduleCsvShared(path);
        QCOMPARE(a.get(), b.get());
        QCOMPARE(summarizeProgram(*a).microbatches, 2);
        QVERIFY(a->ranks == readPytorchScheduleCsv(path).ranks);
        // Same size, other text: read again.
        write("0F0,,0F1,0B0,,0B1\n,1F0,1B0,1F1,1B1\n");
        const auto c = readPytorchScheduleCsvShared(path);
        QVERIFY(c.get() != a.get());
        QVERIFY(c->ranks == readPytorchScheduleCsv(path).ranks);
        QVERIFY(c->ranks != a->ranks);
        write("0F0,0F1,,0B0,,0B1\r\n,1F0,1B0,1F1,2BW1\r\n");
        expectError<ConfigError>([&] { (void)readPytorchScheduleCsvShared(path); },
                                 {"s.csv", "'2BW1'"});
        expectError<ConfigError>(
            [&] { (void)readPytorchScheduleCsvShared(sourceFile("examples/schedules")); },
            {"folder"});
    }
};

QTEST_APPLESS_MAIN(TestPytorchCsv)
#include "tst_pytorch_csv.moc"
