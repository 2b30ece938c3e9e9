#pragma once
// An experiment: one objective and data set, one pipeline size, a budget, and the methods to
// compare. The JSON form (docs/config.md) is shared by the CLI and the desktop app.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compute/corrector.hpp"
#include "compute/optimizer.hpp"
#include "experiment/config/lm_config.hpp"
#include "experiment/config/view_state.hpp"
#include "experiment/step_size/step_rules.hpp"
#include "method.hpp"
#include "objective/linear_objective.hpp"
#include "replay/rpd_replay.hpp"
#include "schedule/timeline.hpp"
#include "util/named_enum.hpp"

namespace pipelens {

// Config fields that take one of a few names: each an enumeration with one table of names
// (util/named_enum.hpp), read, written and listed in messages from that table.
enum class DataSource { Synthetic, Npy, Csv, Libsvm };
inline constexpr EnumNames<DataSource, 4> kDataSources{{{DataSource::Synthetic, "synthetic"},
                                                        {DataSource::Npy, "npy"},
                                                        {DataSource::Csv, "csv"},
                                                        {DataSource::Libsvm, "libsvm"}}};
// What the methods are compared at: equal simulated slots, or equal block updates.
enum class BudgetCompare { Time, Updates };
inline constexpr EnumNames<BudgetCompare, 2> kBudgetCompares{
    {{BudgetCompare::Time, "time"}, {BudgetCompare::Updates, "updates"}}};
enum class BackendKind { Auto, Cpu, OpenCl };
inline constexpr EnumNames<BackendKind, 3> kBackends{
    {{BackendKind::Auto, "auto"}, {BackendKind::Cpu, "cpu"}, {BackendKind::OpenCl, "opencl"}}};
enum class Precision { Double, Float };
// Where each run's gradient-noise generator starts (objective.noise_stream): per_run, at
// default_rng(noise seed); shared, where the runs before it in the experiment left one such
// generator (experiment/run/shared_noise.hpp), as the authors' E4 driver ran its grids.
enum class NoiseStream { PerRun, Shared };
inline constexpr EnumNames<NoiseStream, 2> kNoiseStreams{
    {{NoiseStream::PerRun, "per_run"}, {NoiseStream::Shared, "shared"}}};
inline constexpr EnumNames<Precision, 2> kPrecisions{
    {{Precision::Double, "double"}, {Precision::Float, "float"}}};

struct DataSpec {
    DataSource source = DataSource::Synthetic;
    // synthetic
    std::string kind = "random";  // random | simple | tridiagonal | logistic
    int rows = 600;
    int dim = 64;
    std::uint64_t seed = 1;
    double labelNoise = 0.0;
    double mu = 0.01;
    double conditionNumber = 0.0;
    // files (relative paths are resolved against the config file's folder)
    std::string x;         // npy: X; csv: the table (or X with `y`); libsvm: the file
    std::string y;         // npy: y; csv: optional separate label file
    int labelColumn = -1;  // csv without `y`: label column (-1 = last)
    int libsvmDim = 0;     // libsvm: number of features (0 = largest index seen)

    bool operator==(const DataSpec&) const = default;
};

struct ObjectiveSpec {
    LossKind loss = LossKind::Quadratic;
    double l2 = 0.0;
    // Gaussian noise added to every block gradient (SPEC section 6): g += sigma * N(0, I).
    double gradientNoise = 0.0;
    // Seed of the noise generator; unset: the data seed (0 for data from files).
    std::optional<std::uint64_t> noiseSeed;
    // Shared: one generator per seed for all the runs of the experiment (needs gradientNoise > 0).
    NoiseStream noiseStream = NoiseStream::PerRun;
    // Set for `kind: "char_transformer"`: the language model (loss and the keys above unused).
    std::optional<LanguageModelSpec> languageModel;

    bool operator==(const ObjectiveSpec&) const = default;
};

// A fixed step size, or a grid {2^a : a in [gridMin, gridMax]} from which `rule` picks one.
struct StepSpec {
    double value = 0.0;
    bool grid = false;
    int gridMin = -10;
    int gridMax = 0;
    StepRuleSpec rule;  // best_final, or stable with its thresholds

    bool operator==(const StepSpec&) const = default;
};

struct MethodSpec {
    Method method = Method::PipeDream;
    std::string label;  // shown in legends; default derived from the parameters
    StepSpec step;
    int noam = 0;              // pd: 0 = S
    int replicas = 0;          // localsgd: 0 = S
    int localSteps = 5;        // localsgd: H
    int flushGroup = 0;        // fill-drain, 1f1b, zb-h1: microbatches per flush, 0 = S
    int accumulation = 0;      // 2bw: microbatches summed per step (m), 0 = S
    std::string scheduleFile;  // imported: a PyTorch schedule CSV
    bool asyncUpdate = false;  // imported: update = "async" (else "sync")
    int virtualStages = 2;     // interleaved: chunks per device (v)
    DelayMode delayMode = DelayMode::Uniform;  // rpd
    long long delta = -1;                      // rpd: -1 = PD's max delay S^2 - S/2
    StageOrder order = StageOrder::Uniform;    // rpd
    std::uint64_t seed = 0;                    // rpd: draws (0 = the experiment seed)
    OptimizerSpec optimizer;                   // every method: per block update (default plain SGD)
    CorrectorSpec correctors;  // asynchronous methods and RPD: staleness correctors (default none)

    bool operator==(const MethodSpec&) const = default;
};

enum class BudgetRule { Fit, Truncate, Reach };
inline constexpr EnumNames<BudgetRule, 3> kBudgetRules{
    {{BudgetRule::Fit, "fit"}, {BudgetRule::Truncate, "truncate"}, {BudgetRule::Reach, "reach"}}};

struct BudgetSpec {
    // Exactly one is used, in this order: slots, microbatches, epochs.
    int totalSlots = 0;    // simulated time for every method
    int microbatches = 0;  // PD microbatches; the slot budget is PD's run length
    double epochs = 0.0;   // passes over the M batches by PD; budget as for microbatches
    BudgetCompare compare = BudgetCompare::Time;
    // compare = time, how a pipeline method meets the slot budget B (SPEC sections 6 and 7.1):
    // fit runs the largest N whose whole run fits in B; truncate runs a longer timeline cut
    // after slot B; reach (the authors' E4) runs, uncut, the smallest N whose run lasts at least
    // B slots, so it may end after B. RPD gets the block updates PD's run makes under the rule.
    BudgetRule rule = BudgetRule::Fit;

    bool operator==(const BudgetSpec&) const = default;
};

struct ExperimentConfig {
    std::string name = "experiment";
    std::uint64_t seed = 1;
    // Runs per step size, averaged (SPEC section 6 "Seeds"). Seed i (from 0) adds i to the batch
    // order seed, the RPD seed and the gradient-noise seed; seed 0 is the single run.
    int seeds = 1;
    DataSpec data;
    ObjectiveSpec objective;
    int stages = 4;
    int batchSize = 10;
    bool shuffle = false;
    BudgetSpec budget;
    OpCosts costs;
    SamplingOptions sampling;
    std::vector<MethodSpec> methods;
    BackendKind backend = BackendKind::Auto;
    std::string device;  // OpenCL device index or name substring
    bool allowCpuFallback = true;
    Precision precision = Precision::Double;  // OpenCL and the language model
    std::string baseDir;                      // folder of the config file, for relative data paths
    std::optional<ViewState> view;            // the app's view when saved ("view"; runs ignore it)

    // Parses and validates; every error is a ConfigError naming the key, the value and what is
    // allowed. Unknown keys are errors too.
    static ExperimentConfig fromJson(const nlohmann::json& json, const std::string& baseDir = "");
    // JSON text through parseConfigText, then fromJson. `source` names it in messages.
    static ExperimentConfig fromText(std::string_view text, const std::string& source,
                                     const std::string& baseDir = "");
    // A folder, an unreadable file (with the system's reason) and a file above kMaxConfigBytes
    // are ConfigErrors too.
    static ExperimentConfig fromFile(const std::string& path);
    nlohmann::json toJson() const;
    // Every field against its range (field_limits.hpp) and the rules that join fields (S <= d,
    // rows a multiple of b, a budget set, the language model's sizes): the one check of a config,
    // for a file (fromJson ends with it) and for an edit in the app alike. A ConfigError names the
    // key as the file writes it (methods[1].step_size), the value and what is allowed.
    void validate() const;
    // Resets what the config's choices leave unused to its default (what toJson leaves out: the
    // data keys of another source, the parameters of another method, the linear objective's keys
    // under the language model), so that two configs that run alike compare equal with ==.
    void normalize();
    // Field by field, baseDir and view included; compare normalized configs.
    bool operator==(const ExperimentConfig&) const = default;
    bool languageModel() const { return objective.languageModel.has_value(); }

  private:
    void checkBudgetSet() const;
};

// Limits on config text: lists and objects nest at most this deep (a config needs 4), and a
// config file is at most this large.
constexpr int kMaxConfigDepth = 64;
constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;

// Parses JSON text, refusing (ConfigError, naming `source`) invalid JSON, nesting deeper than
// kMaxConfigDepth and a key given twice in one object.
nlohmann::json parseConfigText(std::string_view text, const std::string& source);

std::string defaultMethodLabel(const MethodSpec& m, int stages);
// The optimizer as written in a config ({"kind": ...} with the keys its kind uses), and its
// reader: a ConfigError names the key under `path`, the value and what is allowed.
nlohmann::json optimizerJson(const OptimizerSpec& o);
OptimizerSpec readOptimizer(const nlohmann::json& v, const std::string& path);
// The method's parameters with the rest at their defaults (see ExperimentConfig::normalize).
MethodSpec normalizedMethod(const MethodSpec& m);

// The correctors as written in a config (a list of {"kind": ...}, in the order of
// kCorrectorKinds, each with its keys; [] for none) and its reader: a ConfigError names the key
// under `path` (methods[i].correctors[j].key), the value and what is allowed. The reader checks
// each entry's own keys and ranges and that no kind is given twice; which methods take which
// correctors is validate()'s (requireCorrectorsFit).
nlohmann::json correctorsJson(const CorrectorSpec& c);
// `order`, when given, receives the kinds in the list's order (for messages).
CorrectorSpec readCorrectors(const nlohmann::json& v, const std::string& path,
                             std::vector<CorrectorKind>* order = nullptr);
// Which correctors method `m` (methods[index]) may use, as docs/correctors.md says: none on the
// synchronous step schedules (fill-drain, 1f1b, zb-h1, interleaved, 2bw, imported sync, whose
// steps read fresh weights); RPD only delay_adaptive (unit block_updates, not per_block) and
// dc; prediction and lookahead exclude each other; lookahead needs optimizer sgd. A ConfigError
// names the setting, its value and what is allowed.
void requireCorrectorsFit(const MethodSpec& m, size_t index);
// Shorthands of the command line and the sweep axes: a bare kind name ("adam": its defaults)
// or an optimizer object; "none", a bare corrector kind ("dc": [{"kind": "dc"}]) or a list.
OptimizerSpec readOptimizerOrKind(const nlohmann::json& v, const std::string& path);
CorrectorSpec readCorrectorsOrKind(const nlohmann::json& v, const std::string& path);
// Every method that can take `correctors` (requireCorrectorsFit) gets them; the others get
// none (synchronous schedules; rpd for a kind it refuses). Returns how many got them.
int setCorrectorsWhereAllowed(ExperimentConfig& config, const CorrectorSpec& correctors);

// The parameters whose 0 (or -1) means "from S", resolved for `stages`: one place for the rule.
int replicasFor(const MethodSpec& m, int stages);      // LocalSGD's R (0: S)
int flushGroupFor(const MethodSpec& m, int stages);    // fill-drain's G, 1F1B's and ZB-H1's M
int accumulationFor(const MethodSpec& m, int stages);  // 2BW's m (0: S)
long long deltaFor(const MethodSpec& m, int stages);   // RPD's delta (-1: S^2 - S/2)
// The step sizes a method runs: its value, or 2^a for every a of its grid, ascending.
std::vector<double> stepSizesOf(const StepSpec& step);

// A data path of the config (data.x, data.y, the corpus, w0), relative to the config file's
// folder (baseDir) unless absolute.
std::string resolveDataPath(const ExperimentConfig& config, const std::string& path);

// The schedule an imported method trains on, read from its schedule_file (relative to the
// config's folder) and validated; ConfigError naming methods[i].schedule_file and the file.
std::shared_ptr<const PipelineProgram> importedProgram(const ExperimentConfig& config,
                                                       const MethodSpec& method);

// A complete default experiment: logistic regression, S = 8, PD vs RPD vs LocalSGD.
ExperimentConfig defaultExperiment();

}  // namespace pipelens
