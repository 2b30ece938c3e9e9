// The language model's OpenCL stages against the authors' own code (../shared/golden-lm): every
// stage's forward output, internals and gradients at w0 (stage_check/), in double to 1e-10, in
// float to 2e-6. Whole runs on the OpenCL executor: tst_opencl_lm_golden_runs.cpp.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/lm_golden_case.hpp"
#include "lm_opencl_stages.hpp"
#include "opencl_test_support.hpp"

using namespace pipelens;
using gpu::DeviceRef;

namespace {

// Every stage forward and backward at w0 on dataset batch 0, chained as the pipeline chains
// them, on the device; returns the largest relative error and fills `report`.
template <typename Real>
double stageCheck(const std::string& name, QString& report) {
    const auto problem = golden_lm::problem(name);
    const LmLayout& layout = problem->layout;
    const LmDims& d = layout.dims();
    const int S = layout.stages();
    gpu::LmOpenClOps<Real> ops(opencl_test::context());
    std::vector<Real> w(static_cast<std::size_t>(layout.size()));
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<Real>(problem->w0[static_cast<Eigen::Index>(i)]);
    const cl::Buffer wDev = ops.reals(w.size(), "w0");
    ops.write(wDev, 0, w.data(), w.size());
    const auto rows = static_cast<std::size_t>(d.tokens());
    const cl::Buffer tokens = ops.ints(rows, "tokens"), targets = ops.ints(rows, "targets");
    ops.writeInts(tokens, problem->train.tokens(0), rows);
    ops.writeInts(targets, problem->train.targets(0), rows);

    double worst = 0.0;
    auto check = [&](const std::string& what, const std::vector<Real>& mine,
                     const std::string& file) {
        const double e = golden_lm::maxRelError(mine, golden_lm::npy(name, "stage_check/" + file));
        report += QString("%1 %2\n").arg(QString::fromStdString(what)).arg(e, 0, 'g', 3);
        worst = std::max(worst, e);
    };
    auto download = [&](const cl::Buffer& b, std::size_t n) {
        std::vector<Real> v(n);
        ops.read({&b, 0}, v.data(), n);
        return v;
    };
    std::vector<std::unique_ptr<gpu::LmOpenClStage<Real>>> stages;
    std::vector<cl::Buffer> out;
    for (int s = 0; s < S; ++s) {
        stages.push_back(std::make_unique<gpu::LmOpenClStage<Real>>(ops, layout, s));
        out.push_back(ops.reals(static_cast<std::size_t>(stages.back()->outputSize()), "out"));
        const DeviceRef in =
            s == 0 ? DeviceRef{} : DeviceRef{&out[static_cast<std::size_t>(s - 1)], 0};
        stages.back()->forward({&wDev, layout.stage(s).offset}, {&tokens, 0}, in, {&out.back(), 0});
        const std::string st = "stage" + std::to_string(s);
        check(st + "_output",
              download(out.back(), static_cast<std::size_t>(stages.back()->outputSize())),
              st + "_output.npy");
    }
    for (const char* internal : {"ln1_out", "qkv", "attn_heads_merged", "attn_out", "ln2_in",
                                 "ln2_out", "mlp_pre_gelu", "mlp_gelu_out", "mlp_out"}) {
        check(std::string("stage1_") + internal, stages[1]->internal(internal),
              std::string("stage1_") + internal + ".npy");
    }
    const auto nv = rows * static_cast<std::size_t>(d.vocab);
    const auto nc = rows * static_cast<std::size_t>(d.width);
    cl::Buffer grad = ops.reals(nv, "grad logits");
    const DeviceRef gl{&grad, 0};
    const double loss = ops.crossEntropy({&out.back(), 0}, {&targets, 0}, d.tokens(), d.vocab, &gl);
    const double goldenLoss = golden_lm::caseJson(name)["stage_check"]["loss"];
    const double lossErr = std::abs(loss - goldenLoss) / goldenLoss;
    report += QString("loss %1\n").arg(lossErr, 0, 'g', 3);
    worst = std::max(worst, lossErr);
    std::size_t gradCount = nv;
    for (int s = S - 1; s >= 0; --s) {
        const std::string st = "stage" + std::to_string(s);
        check(st + "_grad_output", download(grad, gradCount), st + "_grad_output.npy");
        const auto size = static_cast<std::size_t>(layout.stage(s).size);
        const cl::Buffer gw = ops.reals(size, "gw"), gin = ops.reals(nc, "gin");
        stages[static_cast<std::size_t>(s)]->backward({&wDev, layout.stage(s).offset}, {&grad, 0},
                                                      {&gw, 0},
                                                      s > 0 ? DeviceRef{&gin, 0} : DeviceRef{});
        check(st + "_grad_params", download(gw, size), st + "_grad_params.npy");
        if (s > 0) check(st + "_grad_input", download(gin, nc), st + "_grad_input.npy");
        grad = gin;
        gradCount = nc;
    }
    return worst;
}

void addCases() {
    QTest::addColumn<QString>("name");
    for (const auto& n : golden_lm::cases()) QTest::newRow(n.c_str()) << QString::fromStdString(n);
}

}  // namespace

class TestOpenClLmGoldenStages : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void stagesMatchTheAuthorsModelInDouble_data() { addCases(); }
    void stagesMatchTheAuthorsModelInDouble() {
        QFETCH(QString, name);
        QString report;
        const double worst = stageCheck<double>(name.toStdString(), report);
        qInfo("%s: largest relative error %.3g (OpenCL, double)", qPrintable(name), worst);
        QVERIFY2(worst <= 1e-10, qPrintable(report));
    }

    void stagesMatchTheAuthorsModelInFloat_data() { addCases(); }
    void stagesMatchTheAuthorsModelInFloat() {
        QFETCH(QString, name);
        QString report;
        const double worst = stageCheck<float>(name.toStdString(), report);
        qInfo("%s: largest relative error %.3g (OpenCL, float)", qPrintable(name), worst);
        QVERIFY2(worst <= 2e-6, qPrintable(report));
    }
};

QTEST_APPLESS_MAIN(TestOpenClLmGoldenStages)
#include "tst_opencl_lm_golden_stages.moc"
