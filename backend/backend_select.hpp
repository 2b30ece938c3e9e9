#pragma once
// Chooses the compute backend for a run from the config (backend, device, precision,
// allow_cpu_fallback) and the devices present; explains the choice in `notices`.
//   cpu     the CPU engine.
//   opencl  the chosen OpenCL device; without one, the CPU engine with a notice if the config
//           allows a fallback, else a ConfigError.
//   auto    the CPU engine for a small run (estimatedRunWork below 1e9, or
//           PIPELENS_AUTO_OPENCL_MIN_WORK), decided before any OpenCL call; otherwise the first
//           (or the chosen) OpenCL device, else the CPU engine; a notice says which and why.
// The provider makes a fresh backend per run; all runs share one OpenCL context, whose kernels
// are built once, on the first run's (worker) thread. With a fallback allowed, a device that
// fails mid-run hands the run to the CPU engine (reported through `runtimeNotice`).
#include <functional>
#include <string>
#include <vector>

#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"

namespace pipelens {

struct BackendChoice {
    BackendProvider provider;
    std::string name;
};

// runtimeNotice receives messages that arise during runs (a fallback to the CPU engine); it may
// be called from worker threads. Empty: they go to stderr as "notice: ...".
BackendChoice selectBackend(const ExperimentConfig& config, std::vector<std::string>& notices,
                            std::function<void(const std::string&)> runtimeNotice = {});

// The language model's executors for PD and LocalSGD and for RPD (RunOptions::lmExecutor,
// lmRpdExecutor):
//   cpu     the CPU engine (an empty factory).
//   opencl  the chosen OpenCL device in the config's precision; without a device, or double on
//           a device without fp64, the CPU engine with a notice if allow_cpu_fallback, else a
//           ConfigError naming the field.
//   auto    the CPU engine for a small run (under 1e13 floating-point operations, or
//           PIPELENS_AUTO_LM_MIN_FLOPS), decided before any OpenCL call; otherwise whichever of
//           the CPU engine and the device the measured cost model (backend/lm_calibration.hpp,
//           cached per device and model shape) predicts faster; a notice says which and why.
struct LmBackendChoice {
    LmExecutorFactory executor;
    LmRpdExecutorFactory rpdExecutor;
    std::string name = "cpu";
    // What PD and LocalSGD run on, for a person: "CPU engine" or "OpenCL on DEVICE (PLATFORM)".
    std::string engine = "CPU engine";
};
LmBackendChoice selectLmBackend(const ExperimentConfig& config, std::vector<std::string>& notices);

// The engine of a run, for either objective: fills `options`' engine fields (backend for the
// linear models; lmExecutor and lmRpdExecutor for the language model; backendName and engine for
// both) with selectBackend's or selectLmBackend's choice. Notices and runtimeNotice as those.
void chooseEngine(const ExperimentConfig& config, RunOptions& options,
                  std::vector<std::string>& notices,
                  std::function<void(const std::string&)> runtimeNotice = {});

// A run as `pipelens-cli run`, `animate` and Python's `pipelens.run` make it: chooseEngine fills
// `options`' engine fields, runExperiment runs, and the result's notices are the engine choice's
// followed by the run's own (a method moved to the CPU engine, for example).
ExperimentResult runOnChosenEngine(const ExperimentConfig& config, RunOptions& options);

}  // namespace pipelens
