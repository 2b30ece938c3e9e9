#include "experiment/output/chrome_trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

#include "experiment/run/experiment.hpp"
#include "schedule/schedule_tables.hpp"

namespace pipelens {

namespace {

// Appends JSON text to one string through a raw pointer: the caller reserves room for each event
// (room), then literals are copied and numbers written by std::to_chars (shortest round-trip form
// for doubles) with no per-call size checks. A trace of S = 128 over 20 000 slots holds about
// 2.5 million events, so nothing here goes through a DOM or std::string::append.
class JsonText {
  public:
    // Makes sure `bytes` more can be written.
    void room(std::size_t bytes) {
        if (used_ + bytes <= out_.size()) return;
        out_.resize(std::max(out_.size() * 2, used_ + bytes));
    }
    template <std::size_t N>
    JsonText& raw(const char (&text)[N]) {
        std::memcpy(out_.data() + used_, text, N - 1);
        used_ += N - 1;
        return *this;
    }
    JsonText& raw(std::string_view text) {
        room(text.size());
        std::memcpy(out_.data() + used_, text.data(), text.size());
        used_ += text.size();
        return *this;
    }
    // At most 20 bytes.
    JsonText& integer(long long value) {
        char* at = out_.data() + used_;
        used_ += static_cast<std::size_t>(std::to_chars(at, at + 24, value).ptr - at);
        return *this;
    }
    // At most 24 bytes.
    JsonText& number(double value) {
        char* at = out_.data() + used_;
        used_ += static_cast<std::size_t>(std::to_chars(at, at + 32, value).ptr - at);
        return *this;
    }
    JsonText& string(std::string_view text) {
        room(text.size() * 6 + 2);
        char* at = out_.data() + used_;
        *at++ = '"';
        for (const char c : text) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') {
                *at++ = '\\';
                *at++ = c;
            } else if (u < 0x20 || u == 0x7f) {
                static constexpr std::string_view kHex = "0123456789abcdef";
                *at++ = '\\';
                *at++ = 'u';
                *at++ = '0';
                *at++ = '0';
                *at++ = kHex[u >> 4U];
                *at++ = kHex[u & 0xfU];
            } else {
                *at++ = c;
            }
        }
        *at++ = '"';
        used_ = static_cast<std::size_t>(at - out_.data());
        return *this;
    }
    std::string take() {
        out_.resize(used_);
        return std::move(out_);
    }

  private:
    std::string out_;
    std::size_t used_ = 0;
};

// Room for one event besides its strings: literals and up to ten numbers.
constexpr std::size_t kEventBytes = 512;

constexpr long long kMicrosPerSlot = 1000;

// One process of the trace: a method, or one LocalSGD replica of it.
struct TraceProcess {
    int pid = 0;
    int firstTid = 0;  // stage s has tid firstTid + s
};

class TraceWriter {
  public:
    explicit TraceWriter(std::size_t reserveBytes) {
        text_.room(reserveBytes);
        text_.raw(std::string_view("{\"traceEvents\":["));
    }

    void method(const TraceMethod& m) {
        const Timeline& tl = *m.timeline;
        const ScheduleParams& p = tl.params;
        const int stages = std::max(0, p.stages);
        const bool replicas = p.kind == ScheduleKind::LocalSgd && p.replicas > 1;
        const int processes = replicas ? p.replicas : 1;
        std::vector<TraceProcess> procs;
        procs.reserve(static_cast<std::size_t>(processes));
        for (int r = 0; r < processes; ++r) {
            const TraceProcess proc{nextPid_++, nextTid_};
            nextTid_ += stages;
            procs.push_back(proc);
            const std::string name =
                replicas ? m.label + " replica " + std::to_string(r + 1) : m.label;
            metadata(proc.pid, -1, "process_name", name);
            metadataSort(proc.pid, -1, "process_sort_index", proc.pid);
            for (int s = 0; s < stages; ++s) {
                const int tid = proc.firstTid + s;
                metadata(proc.pid, tid, "thread_name", "stage " + std::to_string(s + 1));
                metadataSort(proc.pid, tid, "thread_sort_index", s + 1);
            }
        }
        const std::vector<long long> updateOf =
            m.delays ? updateIndex(*m.delays) : std::vector<long long>{};
        for (const TimelineCell& c : tl.cells) {
            if (c.stage < 0 || c.stage >= stages) continue;
            std::size_t r = 0;
            if (replicas) {
                const std::optional<ReplicaPlace> place = localSgdPlace(p, c.microbatch);
                r = place ? static_cast<std::size_t>(place->replica) : 0;
            }
            cell(c, procs[r], m.delays, updateOf);
        }
        if (replicas) {
            for (std::size_t i = 0; i < tl.averagingSlots.size(); ++i) {
                for (const TraceProcess& proc : procs)
                    average(proc, tl.averagingSlots[i], static_cast<long long>(i) + 1);
            }
        }
        if (m.lossPerSlot != nullptr && !procs.empty()) loss(procs.front().pid, *m.lossPerSlot);
    }

    std::string finish() {
        text_.raw(std::string_view("\n],\"displayTimeUnit\":\"ms\"}\n"));
        return text_.take();
    }

  private:
    // The index k of the block update B(m, s) makes, for every (m, s) (-1: none in the table).
    static std::vector<long long> updateIndex(const DelayTable& d) {
        std::vector<long long> of(
            static_cast<std::size_t>(std::max(0, d.microbatches())) * std::max(0, d.stages()), -1);
        for (long long k = 0; k < d.updates(); ++k) {
            const BlockUpdateInfo& u = d.update(k);
            of[static_cast<std::size_t>(u.microbatch) * d.stages() + u.stage] = k;
        }
        return of;
    }

    void begin() {
        text_.room(kEventBytes);
        if (first_) {
            text_.raw("\n");
        } else {
            text_.raw(",\n");
        }
        first_ = false;
    }

    void metadata(int pid, int tid, std::string_view what, const std::string& name) {
        begin();
        text_.raw("{\"ph\":\"M\",\"name\":\"").raw(what).raw("\",\"pid\":").integer(pid);
        if (tid > 0) text_.raw(",\"tid\":").integer(tid);
        text_.raw(",\"args\":{\"name\":").string(name).raw("}}");
    }

    void metadataSort(int pid, int tid, std::string_view what, long long index) {
        begin();
        text_.raw("{\"ph\":\"M\",\"name\":\"").raw(what).raw("\",\"pid\":").integer(pid);
        if (tid > 0) text_.raw(",\"tid\":").integer(tid);
        text_.raw(",\"args\":{\"sort_index\":").integer(index).raw("}}");
    }

    void cell(const TimelineCell& c, const TraceProcess& proc, const DelayTable* delays,
              const std::vector<long long>& updateOf) {
        // INTEROP.md's letters: F forward, B full backward, and the zero-bubble split into I
        // (input gradient) and W (weight gradient, where the block's update lands).
        const char* letter = "F ";
        const char* category = "forward";
        switch (c.op) {
            case OpKind::Forward:
                break;
            case OpKind::Backward:
                letter = "B ";
                category = "backward";
                break;
            case OpKind::InputGrad:
                letter = "I ";
                category = "input_grad";
                break;
            case OpKind::WeightGrad:
                letter = "W ";
                category = "weight_grad";
                break;
        }
        const bool updates = c.op == OpKind::Backward || c.op == OpKind::WeightGrad;
        begin();
        text_.raw("{\"ph\":\"X\",\"name\":\"")
            .raw(letter)
            .integer(c.microbatch)
            .raw("\",\"cat\":\"")
            .raw(category)
            .raw("\",\"ts\":");
        text_.integer(static_cast<long long>(c.startSlot) * kMicrosPerSlot)
            .raw(",\"dur\":")
            .integer(static_cast<long long>(c.endSlot - c.startSlot + 1) * kMicrosPerSlot)
            .raw(",\"pid\":")
            .integer(proc.pid)
            .raw(",\"tid\":")
            .integer(proc.firstTid + c.stage)
            .raw(",\"args\":{\"microbatch\":")
            .integer(c.microbatch)
            .raw(",\"stage\":")
            .integer(c.stage + 1);
        if (delays != nullptr && c.microbatch >= 0 && c.microbatch < delays->microbatches() &&
            c.stage < delays->stages()) {
            text_.raw(",\"version_read\":").integer(delays->versionRead(c.microbatch, c.stage));
            if (updates) {
                const long long k =
                    updateOf[static_cast<std::size_t>(c.microbatch) * delays->stages() + c.stage];
                if (k >= 0) text_.raw(",\"staleness\":").integer(delays->delay(k, c.stage));
            }
        }
        text_.raw("}}");
    }

    void average(const TraceProcess& proc, int slot, long long round) {
        begin();
        text_.raw("{\"ph\":\"i\",\"s\":\"p\",\"name\":\"average\",\"cat\":\"averaging\",\"ts\":")
            .integer((static_cast<long long>(slot) + 1) * kMicrosPerSlot)
            .raw(",\"pid\":")
            .integer(proc.pid)
            .raw(",\"tid\":")
            .integer(proc.firstTid)
            .raw(",\"args\":{\"round\":")
            .integer(round)
            .raw("}}");
    }

    void loss(int pid, const std::vector<double>& values) {
        for (const std::size_t i : traceLossSamples(values.size())) {
            const double v = values[i];
            if (!std::isfinite(v)) continue;
            begin();
            text_.raw("{\"ph\":\"C\",\"name\":\"loss\",\"ts\":")
                .integer(static_cast<long long>(i) * kMicrosPerSlot)
                .raw(",\"pid\":")
                .integer(pid)
                .raw(",\"args\":{\"loss\":")
                .number(v)
                .raw("}}");
        }
    }

    JsonText text_;
    bool first_ = true;
    int nextPid_ = 1;
    int nextTid_ = 1;
};

}  // namespace

std::vector<std::size_t> traceLossSamples(std::size_t count, std::size_t maxSamples) {
    std::vector<std::size_t> keep;
    if (count <= maxSamples || maxSamples < 2) {
        const std::size_t n = count <= maxSamples ? count : std::min<std::size_t>(count, 1);
        keep.resize(n);
        for (std::size_t i = 0; i < n; ++i) keep[i] = i;
        return keep;
    }
    // j (count - 1) / (maxSamples - 1), rounded down: strictly ascending because
    // count - 1 >= maxSamples - 1, and the last one is count - 1.
    keep.resize(maxSamples);
    const auto span = static_cast<unsigned long long>(count - 1);
    const auto steps = static_cast<unsigned long long>(maxSamples - 1);
    for (std::size_t j = 0; j < maxSamples; ++j)
        keep[j] = static_cast<std::size_t>(static_cast<unsigned long long>(j) * span / steps);
    return keep;
}

std::string chromeTraceJson(const std::vector<TraceMethod>& methods) {
    // About 155 bytes per op (up to 160 with long numbers), 100 per counter sample.
    std::size_t bytes = 64;
    for (const TraceMethod& m : methods) {
        if (m.timeline == nullptr) continue;
        bytes += m.timeline->cells.size() * 160;
        if (m.lossPerSlot != nullptr)
            bytes += std::min(m.lossPerSlot->size(), kTraceMaxLossSamples) * 100;
    }
    TraceWriter writer(bytes);
    for (const TraceMethod& m : methods) {
        if (m.timeline != nullptr) writer.method(m);
    }
    return writer.finish();
}

std::string chromeTraceJson(const ExperimentResult& result) {
    std::vector<TraceMethod> methods;
    for (const MethodRun& run : result.methods) {
        const RunResult& r = run.result;
        if (!r.timeline) continue;
        TraceMethod m;
        m.label = !r.label.empty() ? r.label : run.label;
        m.timeline = &*r.timeline;
        m.delays = r.delays ? &*r.delays : nullptr;
        m.lossPerSlot = r.objectivePerSlot.empty() ? nullptr : &r.objectivePerSlot;
        methods.push_back(std::move(m));
    }
    return chromeTraceJson(methods);
}

}  // namespace pipelens
