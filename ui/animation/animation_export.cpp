#include "animation/animation_export.hpp"

#include <unistd.h>

#include <QImage>
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "animation/animation_frames.hpp"
#include "animation/video_encoder.hpp"
#include "charts/loss_chart.hpp"
#include "errors.hpp"
#include "experiment/output/results.hpp"
#include "main_window.hpp"
#include "util/file_target.hpp"

namespace pipelens::ui {
namespace {

namespace fs = std::filesystem;

video::FrameView viewOf(const QImage& image) {
    return {image.constBits(), image.width(), image.height(),
            static_cast<int>(image.bytesPerLine())};
}

// Encodes frames on a thread of its own, at most kDepth behind the frames drawn. The encoder's
// first error is rethrown by the next push or by finish.
class EncoderThread {
  public:
    explicit EncoderThread(video::FrameEncoder& encoder)
        : encoder_(encoder), worker_([this] { loop(); }) {}
    ~EncoderThread() {
        {
            const std::lock_guard lock(mutex_);
            abandon_ = true;
        }
        ready_.notify_all();
        if (worker_.joinable()) worker_.join();
    }
    EncoderThread(const EncoderThread&) = delete;
    EncoderThread& operator=(const EncoderThread&) = delete;

    void push(const QImage& frame) {
        std::unique_lock lock(mutex_);
        space_.wait(lock, [&] { return queue_.size() < kDepth || error_; });
        if (error_) std::rethrow_exception(error_);
        queue_.push_back(frame);  // shares the pixels; the renderer's next frame detaches
        lock.unlock();
        ready_.notify_one();
    }
    // Encodes what is queued, flushes the encoder and writes the trailer.
    void finish() {
        {
            const std::lock_guard lock(mutex_);
            closing_ = true;
        }
        ready_.notify_all();
        worker_.join();
        if (error_) std::rethrow_exception(error_);
    }

  private:
    static constexpr std::size_t kDepth = 4;

    void loop() {
        try {
            for (;;) {
                QImage frame;
                {
                    std::unique_lock lock(mutex_);
                    ready_.wait(lock, [&] { return !queue_.empty() || closing_ || abandon_; });
                    if (abandon_) return;
                    if (queue_.empty()) break;  // closing, all encoded
                    frame = std::move(queue_.front());
                    queue_.pop_front();
                }
                space_.notify_one();
                encoder_.addFrame(viewOf(frame));
            }
            encoder_.finish();
        } catch (...) {
            const std::lock_guard lock(mutex_);
            error_ = std::current_exception();
        }
        space_.notify_all();
    }

    video::FrameEncoder& encoder_;
    std::mutex mutex_;
    std::condition_variable ready_;  // a frame queued, or closing
    std::condition_variable space_;  // a frame taken, or an error
    std::deque<QImage> queue_;
    bool closing_ = false;
    bool abandon_ = false;
    std::exception_ptr error_;
    std::thread worker_;  // last: starts once the rest exists
};

// A 256-colour palette from a few frames spread over the range (the first, the last and three
// between: colours that appear as the run goes on, such as the heatmap's, are in it).
video::GifPalette paletteFor(AnimationFrames& frames, std::pair<int, int> slotRange) {
    const int n = slotRange.second - slotRange.first;
    std::vector<int> picks;
    for (int q = 0; q <= 4; ++q) {
        const int slot = slotRange.first + std::min(n - 1, q * (n - 1) / 4);
        if (picks.empty() || picks.back() != slot) picks.push_back(slot);
    }
    std::vector<QImage> images;
    std::vector<video::FrameView> views;
    images.reserve(picks.size());
    for (int slot : picks) images.push_back(frames.render(slot).copy());
    views.reserve(images.size());
    for (const QImage& image : images) views.push_back(viewOf(image));
    return video::GifPalette::fromSamples(views);
}

}  // namespace

AnimationSource animationSource(const MainWindow& window) {
    const LossChart* loss = window.lossChart();
    AnimationSource source;
    source.snapshot = loss->snapshot();
    if (loss->computing()) {
        throw ConfigError("a run is computing: export the animation once it has finished");
    }
    if (!source.snapshot || source.snapshot->planOnly) {
        throw ConfigError("there are no finished results to animate yet");
    }
    source.lossStyle = loss;
    source.defaultMethod = window.ganttMethodIndex();
    return source;
}

AnimationWritten exportAnimation(const AnimationSource& source, const AnimationOptions& options,
                                 const AnimationFields& fields,
                                 const std::function<void(int, int)>& progress,
                                 const std::atomic<bool>* cancel) {
    if (!source.snapshot) throw ConfigError("there are no finished results to animate");
    const RunSnapshot& snapshot = *source.snapshot;
    AnimationWritten written;
    if (options.method.empty() && source.defaultMethod >= 0 &&
        static_cast<size_t>(source.defaultMethod) < snapshot.runs().size() &&
        snapshot.result(static_cast<size_t>(source.defaultMethod)).timeline) {
        written.method = source.defaultMethod;
    } else {
        written.method = animationMethod(snapshot, options.method, fields.method);
    }
    AnimationFrames frames(source.snapshot, written.method, options.panels,
                           QSize(options.width, options.height), source.lossStyle);
    written.totalSlots = frames.totalSlots();
    written.slotRange = options.slotRange.value_or(std::pair{0, written.totalSlots});
    checkSlotRange(
        written.slotRange, written.totalSlots,
        std::to_string(written.slotRange.first) + ":" + std::to_string(written.slotRange.second),
        fields.slotRange);
    const std::string target = prepareAnimationTarget(options, fields.out);
    const int first = written.slotRange.first;
    const int count = written.slotRange.second - first;

    video::GifPalette palette;
    if (options.format == video::VideoFormat::Gif) palette = paletteFor(frames, written.slotRange);
    const auto stopped = [&] { return cancel != nullptr && cancel->load(); };
    // Draws every frame into an encoder writing `path`.
    const auto encode = [&](const std::string& path) {
        video::FrameEncoder encoder(options.format, path, options.width, options.height,
                                    options.fps, &palette, options.out);
        EncoderThread thread(encoder);
        for (int k = 0; k < count; ++k) {
            if (stopped()) throw Interrupted("animation export stopped");
            thread.push(frames.render(first + k));
            if (progress) progress(k + 1, count);
        }
        thread.finish();
        written.frames = encoder.framesWritten();
    };

    if (options.format == video::VideoFormat::PngFolder) {
        written.path = target;
        written.warnings = writeFolderAtomically(
            target,
            [&](const fs::path& tmp) {
                writeFileAtomically((tmp / kAnimationMarker).string(),
                                    "PipeLens animation frames: this folder may be replaced by "
                                    "the next animation export\n");
                encode(tmp.string());
            },
            cancel);
        return written;
    }
    // A file: written beside the (link-resolved) target under a temporary name, then renamed.
    checkFileTarget(target);
    const std::string resolved = resolveFileTarget(target);
    std::string tmp = resolved;
    tmp += ".tmp-";
    tmp += std::to_string(::getpid());
    try {
        encode(tmp);
        if (stopped()) throw Interrupted("animation export stopped");
        std::error_code ec;
        fs::rename(tmp, resolved, ec);
        if (ec) {
            std::string message = "cannot write ";
            message += target;
            message += ": ";
            message += ec.message();
            throw IoError(message);
        }
    } catch (...) {
        std::error_code ec;
        fs::remove(tmp, ec);
        throw;
    }
    written.path = target;
    return written;
}

}  // namespace pipelens::ui
