#include "compute/lm_rpd_executor.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "compute/lm_cpu_pipeline_executor.hpp"
#include "objective/lm/char_transformer.hpp"
#include "objective/lm/lm_model.hpp"

namespace pipelens {

void LmRpdExecutor::setOptimizer(const OptimizerSpec& spec) {
    refuseLmOptimizer(spec, describe());
}

void LmRpdExecutor::setCorrectors(const CorrectorSpec& spec) {
    refuseLmCorrectors(spec, describe());
}

namespace {

template <typename Real>
class LmCpuRpdExecutor final : public LmRpdExecutor {
  public:
    explicit LmCpuRpdExecutor(std::shared_ptr<const CharTransformerProblem> problem)
        : problem_(std::move(problem)), model_(problem_->layout) {
        const LmLayout& layout = problem_->layout;
        const int S = layout.stages();
        buffers_.resize(static_cast<std::size_t>(S));
        long long largest = 0;
        for (int s = 0; s < S; ++s) {
            const auto& b = layout.stage(s);
            std::vector<Real> block(static_cast<std::size_t>(b.size));
            for (long long i = 0; i < b.size; ++i) {
                block[static_cast<std::size_t>(i)] =
                    static_cast<Real>(problem_->w0[static_cast<Eigen::Index>(b.offset + i)]);
            }
            buffers_[static_cast<std::size_t>(s)].push_back(std::move(block));
            largest = std::max(largest, b.size);
        }
        grad_.resize(static_cast<std::size_t>(largest));
        stageWeights_.resize(static_cast<std::size_t>(S));
    }

    std::string describe() const override {
        return problem_->params.precision == LmPrecision::Float ? "cpu, float" : "cpu, double";
    }

    double step(const std::vector<int>& point, int stage, int batch, int from, int to,
                double stepSize) override {
        const CharTransformerProblem& p = *problem_;
        resolve(point);
        const double loss = model_.lossAndStageGradient(
            stageWeights_, p.train.tokens(batch), p.train.targets(batch), stage, grad_.data());
        std::vector<Real>& next = buffer(stage, to);  // may grow the list: before `old`
        const std::vector<Real>& old = buffer(stage, from);
        next.resize(old.size());
        if (dc_) {
            // DC-ASGD: g + lambda g (.) g (.) (w_now - w_read), w_now the newest version.
            const std::vector<Real>& read = buffer(stage, point[static_cast<std::size_t>(stage)]);
            const auto lambda = static_cast<Real>(lambda_);
            for (std::size_t i = 0; i < old.size(); ++i) {
                const Real gi = grad_[i];
                grad_[i] = gi + lambda * (gi * gi) * (old[i] - read[i]);
            }
        }
        if (optimizer_) {
            optimizer_->update(0, stage, old.data(), grad_.data(), stepSize, true, next.data());
            return loss;
        }
        const auto g = static_cast<Real>(stepSize);
        for (std::size_t i = 0; i < next.size(); ++i) next[i] = old[i] - g * grad_[i];
        return loss;
    }

    void setOptimizer(const OptimizerSpec& spec) override {
        optimizer_.reset();
        if (spec.plain()) return;
        optimizer_.emplace();
        optimizer_->prepare(spec, problem_->layout, 1, 1.0, false);
    }

    void setCorrectors(const CorrectorSpec& spec) override {
        if (spec.prediction || spec.lookahead || spec.accumulate > 1) {
            // The config refuses these for RPD (requireCorrectorsFit); a guard for direct callers.
            throw std::invalid_argument(
                "RPD takes the correctors delay_adaptive and dc only, not " +
                correctorSummary(spec));
        }
        dc_ = spec.dc;
        lambda_ = spec.lambda;
    }

    double meanLoss(const std::vector<int>& point, const TokenBatches& batches) override {
        assemble(point);
        return model_.meanLoss(flat_.data(), batches);
    }

    Eigen::VectorXd weights(const std::vector<int>& point) const override {
        const LmLayout& layout = problem_->layout;
        Eigen::VectorXd w(layout.size());
        for (int s = 0; s < layout.stages(); ++s) {
            const auto& v = buffers_[static_cast<std::size_t>(s)]
                                    [static_cast<std::size_t>(point[static_cast<std::size_t>(s)])];
            for (std::size_t i = 0; i < v.size(); ++i) {
                w[layout.stage(s).offset + static_cast<Eigen::Index>(i)] =
                    static_cast<double>(v[i]);
            }
        }
        return w;
    }

  private:
    std::vector<Real>& buffer(int block, int index) {
        auto& list = buffers_[static_cast<std::size_t>(block)];
        if (static_cast<std::size_t>(index) >= list.size())
            list.resize(static_cast<std::size_t>(index) + 1);
        return list[static_cast<std::size_t>(index)];
    }
    void resolve(const std::vector<int>& point) {
        for (std::size_t j = 0; j < stageWeights_.size(); ++j) {
            stageWeights_[j] = buffers_[j][static_cast<std::size_t>(point[j])].data();
        }
    }
    void assemble(const std::vector<int>& point) {
        const LmLayout& layout = problem_->layout;
        flat_.resize(static_cast<std::size_t>(layout.size()));
        for (int s = 0; s < layout.stages(); ++s) {
            const auto& v = buffers_[static_cast<std::size_t>(s)]
                                    [static_cast<std::size_t>(point[static_cast<std::size_t>(s)])];
            std::copy(v.begin(), v.end(), flat_.begin() + layout.stage(s).offset);
        }
    }

    std::shared_ptr<const CharTransformerProblem> problem_;
    CharTransformer<Real> model_;
    std::vector<std::vector<std::vector<Real>>> buffers_;  // block, buffer index
    std::vector<const Real*> stageWeights_;
    std::vector<Real> grad_, flat_;
    std::optional<LmBlockOptimizer<Real>> optimizer_;  // set only for one that is not plain()
    bool dc_ = false;                                  // the dc corrector, with lambda_
    double lambda_ = 0.0;
};

}  // namespace

std::unique_ptr<LmRpdExecutor> makeLmCpuRpdExecutor(
    std::shared_ptr<const CharTransformerProblem> problem) {
    if (problem->params.precision == LmPrecision::Float) {
        return std::make_unique<LmCpuRpdExecutor<float>>(std::move(problem));
    }
    return std::make_unique<LmCpuRpdExecutor<double>>(std::move(problem));
}

}  // namespace pipelens
