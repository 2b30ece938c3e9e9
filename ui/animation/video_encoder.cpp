#include "animation/video_encoder.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "errors.hpp"
#include "util/file_target.hpp"

namespace pipelens::video {
namespace {

// ---- small RAII owners of FFmpeg's handles ----

struct CodecContextFree {
    void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextFree>;

struct FrameFree {
    void operator()(AVFrame* f) const { av_frame_free(&f); }
};
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;

struct PacketFree {
    void operator()(AVPacket* p) const { av_packet_free(&p); }
};
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;

struct ScalerFree {
    void operator()(SwsContext* s) const { sws_freeContext(s); }
};
using ScalerPtr = std::unique_ptr<SwsContext, ScalerFree>;

// An output file's muxer and its I/O context (closed, without the trailer, if never finished).
struct OutputFree {
    void operator()(AVFormatContext* c) const {
        if (c->pb != nullptr && (c->oformat->flags & AVFMT_NOFILE) == 0) avio_closep(&c->pb);
        avformat_free_context(c);
    }
};
using OutputPtr = std::unique_ptr<AVFormatContext, OutputFree>;

struct InputFree {
    void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
using InputPtr = std::unique_ptr<AVFormatContext, InputFree>;

std::string avError(int code) {
    std::array<char, AV_ERROR_MAX_STRING_SIZE> text{};
    if (av_strerror(code, text.data(), text.size()) < 0) {
        std::snprintf(text.data(), text.size(), "error %d", code);
    }
    return text.data();
}

// "cannot write PATH: CALL failed: REASON".
[[noreturn]] void fail(const std::string& verb, const std::string& path, const char* call,
                       const std::string& reason) {
    std::string message = verb;
    message += ' ';
    message += path;
    message += ": ";
    message += call;
    message += " failed";
    if (!reason.empty()) {
        message += ": ";
        message += reason;
    }
    throw IoError(message);
}

// Checks an FFmpeg return code (negative: an error).
int check(int rc, const std::string& path, const char* call) {
    if (rc < 0) fail("cannot write", path, call, avError(rc));
    return rc;
}

template <typename T>
T* checkNotNull(T* p, const std::string& path, const char* call) {
    if (p == nullptr) fail("cannot write", path, call, "no result (out of memory?)");
    return p;
}

int readCheck(int rc, const std::string& path, const char* call) {
    if (rc < 0) fail("cannot read", path, call, avError(rc));
    return rc;
}

}  // namespace

// ---- GifPalette ----

GifPalette GifPalette::fromSamples(const std::vector<FrameView>& samples) {
    constexpr std::size_t kBins = 32768;
    std::vector<std::uint64_t> count(kBins, 0);
    std::vector<std::array<std::uint64_t, 3>> sum(kBins, {0, 0, 0});
    for (const FrameView& f : samples) {
        for (int y = 0; y < f.height; ++y) {
            const std::uint8_t* p = f.bgrx + static_cast<std::ptrdiff_t>(y) * f.strideBytes;
            for (int x = 0; x < f.width; ++x, p += 4) {
                const std::size_t bin = (static_cast<std::size_t>(p[2] >> 3U) << 10U) |
                                        (static_cast<std::size_t>(p[1] >> 3U) << 5U) |
                                        static_cast<std::size_t>(p[0] >> 3U);
                ++count[bin];
                sum[bin][0] += p[2];
                sum[bin][1] += p[1];
                sum[bin][2] += p[0];
            }
        }
    }
    std::vector<std::size_t> bins(kBins);
    std::iota(bins.begin(), bins.end(), std::size_t{0});
    const auto used = static_cast<std::size_t>(
        std::count_if(count.begin(), count.end(), [](std::uint64_t c) { return c > 0; }));
    const std::size_t keep = std::min<std::size_t>(used, kTransparent);
    std::partial_sort(bins.begin(), bins.begin() + static_cast<std::ptrdiff_t>(keep), bins.end(),
                      [&](std::size_t a, std::size_t b) {
                          return count[a] != count[b] ? count[a] > count[b] : a < b;
                      });
    GifPalette palette;
    palette.colours_ = static_cast<int>(keep);
    std::vector<std::array<int, 3>> rgb(keep);
    for (std::size_t i = 0; i < keep; ++i) {
        const std::size_t bin = bins[i];
        const std::uint64_t n = count[bin];
        for (std::size_t c = 0; c < 3; ++c) rgb[i][c] = static_cast<int>((sum[bin][c] + n / 2) / n);
        palette.argb_[i] = 0xff000000U | (static_cast<std::uint32_t>(rgb[i][0]) << 16U) |
                           (static_cast<std::uint32_t>(rgb[i][1]) << 8U) |
                           static_cast<std::uint32_t>(rgb[i][2]);
    }
    for (std::size_t i = keep; i < kTransparent; ++i) palette.argb_[i] = 0xff000000U;
    palette.argb_[kTransparent] = 0x00000000U;  // the encoder's "unchanged since last frame"
    if (keep == 0) {
        palette.colours_ = 1;
        rgb.push_back({0, 0, 0});
    }
    // Each quantised colour to its nearest entry; a bin that is an entry maps to that entry.
    palette.lut_.assign(kBins, 0);
    std::vector<int> entryOfBin(kBins, -1);
    for (std::size_t i = 0; i < keep; ++i) entryOfBin[bins[i]] = static_cast<int>(i);
    for (std::size_t bin = 0; bin < kBins; ++bin) {
        if (entryOfBin[bin] >= 0) {
            palette.lut_[bin] = static_cast<std::uint8_t>(entryOfBin[bin]);
            continue;
        }
        const int r = static_cast<int>(((bin >> 10U) & 31U) << 3U) + 4;
        const int g = static_cast<int>(((bin >> 5U) & 31U) << 3U) + 4;
        const int b = static_cast<int>((bin & 31U) << 3U) + 4;
        int best = 0;
        int bestDistance = 1 << 30;
        for (std::size_t i = 0; i < rgb.size(); ++i) {
            const int dr = r - rgb[i][0];
            const int dg = g - rgb[i][1];
            const int db = b - rgb[i][2];
            // Green counts most, blue least, as the eye sees differences.
            const int d = 3 * dr * dr + 4 * dg * dg + 2 * db * db;
            if (d < bestDistance) {
                bestDistance = d;
                best = static_cast<int>(i);
            }
        }
        palette.lut_[bin] = static_cast<std::uint8_t>(best);
    }
    return palette;
}

void GifPalette::mapRow(const std::uint8_t* bgrx, std::uint8_t* indices, int width) const {
    const std::uint8_t* lut = lut_.data();
    for (int x = 0; x < width; ++x, bgrx += 4) {
        indices[x] = lut[(static_cast<unsigned>(bgrx[2] >> 3U) << 10U) |
                         (static_cast<unsigned>(bgrx[1] >> 3U) << 5U) |
                         static_cast<unsigned>(bgrx[0] >> 3U)];
    }
}

// ---- FrameEncoder ----

struct FrameEncoder::Impl {
    VideoFormat format = VideoFormat::Gif;
    std::string path;  // what is written
    std::string name;  // what messages call it
    int width = 0;
    int height = 0;
    int fps = 0;
    GifPalette palette;
    OutputPtr output;
    AVStream* stream = nullptr;  // owned by `output`
    CodecContextPtr codec;
    FramePtr frame;
    PacketPtr packet;
    ScalerPtr scaler;
    int frames = 0;
    int pngsWritten = 0;
    bool finished = false;

    void openCodec(AVCodecID id, AVPixelFormat pixels);
    void openMuxer(const char* muxer);
    void convert(const FrameView& f);
    void send(const AVFrame* f);
    void writePacket();
};

void FrameEncoder::Impl::openCodec(AVCodecID id, AVPixelFormat pixels) {
    const AVCodec* encoder = avcodec_find_encoder(id);
    if (encoder == nullptr) {
        fail("cannot write", name, "avcodec_find_encoder",
             std::string("this FFmpeg has no ") + avcodec_get_name(id) + " encoder");
    }
    codec.reset(checkNotNull(avcodec_alloc_context3(encoder), name, "avcodec_alloc_context3"));
    AVCodecContext* c = codec.get();
    c->width = width;
    c->height = height;
    c->pix_fmt = pixels;
    c->time_base = AVRational{1, fps};
    c->framerate = AVRational{fps, 1};
    if (format == VideoFormat::Mp4) {
        c->gop_size = 5 * fps;  // a key frame every 5 s: seeking stays quick, the file small
        c->thread_count = 0;    // as many as the machine has
        // swscale converts with BT.709 into the limited range; say so.
        c->colorspace = AVCOL_SPC_BT709;
        c->color_primaries = AVCOL_PRI_BT709;
        c->color_trc = AVCOL_TRC_BT709;
        c->color_range = AVCOL_RANGE_MPEG;
        if (std::strcmp(encoder->name, "libx264") == 0) {
            // Flat colours and sharp edges: x264's "animation" tuning keeps them crisp; "veryfast"
            // keeps a long run's encode within seconds.
            check(av_opt_set(c->priv_data, "preset", "veryfast", 0), name, "av_opt_set(preset)");
            check(av_opt_set(c->priv_data, "tune", "animation", 0), name, "av_opt_set(tune)");
            check(av_opt_set(c->priv_data, "crf", "23", 0), name, "av_opt_set(crf)");
        }
    }
    if (output && (output->oformat->flags & AVFMT_GLOBALHEADER) != 0) {
        c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    }
    check(avcodec_open2(c, encoder, nullptr), name, "avcodec_open2");
    frame.reset(checkNotNull(av_frame_alloc(), name, "av_frame_alloc"));
    frame->format = pixels;
    frame->width = width;
    frame->height = height;
    check(av_frame_get_buffer(frame.get(), 0), name, "av_frame_get_buffer");
    packet.reset(checkNotNull(av_packet_alloc(), name, "av_packet_alloc"));
    if (pixels != AV_PIX_FMT_PAL8) {
        scaler.reset(checkNotNull(sws_getContext(width, height, AV_PIX_FMT_BGR0, width, height,
                                                 pixels, SWS_POINT, nullptr, nullptr, nullptr),
                                  name, "sws_getContext"));
        if (pixels == AV_PIX_FMT_YUV420P) {
            const int* bt709 = sws_getCoefficients(SWS_CS_ITU709);
            check(sws_setColorspaceDetails(scaler.get(), sws_getCoefficients(SWS_CS_DEFAULT), 1,
                                           bt709, 0, 0, 1 << 16, 1 << 16),
                  name, "sws_setColorspaceDetails");
        }
    }
}

void FrameEncoder::Impl::openMuxer(const char* muxer) {
    AVFormatContext* raw = nullptr;
    check(avformat_alloc_output_context2(&raw, nullptr, muxer, path.c_str()), name,
          "avformat_alloc_output_context2");
    output.reset(checkNotNull(raw, name, "avformat_alloc_output_context2"));
}

void FrameEncoder::Impl::convert(const FrameView& f) {
    check(av_frame_make_writable(frame.get()), name, "av_frame_make_writable");
    if (format == VideoFormat::Gif) {
        for (int y = 0; y < height; ++y) {
            palette.mapRow(f.bgrx + static_cast<std::ptrdiff_t>(y) * f.strideBytes,
                           frame->data[0] + static_cast<std::ptrdiff_t>(y) * frame->linesize[0],
                           width);
        }
        std::memcpy(frame->data[1], palette.argb().data(), 256 * sizeof(std::uint32_t));
        return;
    }
    const std::uint8_t* const planes[1] = {f.bgrx};
    const int strides[1] = {f.strideBytes};
    const int rows =
        sws_scale(scaler.get(), planes, strides, 0, height, frame->data, frame->linesize);
    if (rows != height) fail("cannot write", name, "sws_scale", avError(rows < 0 ? rows : -1));
}

// Sends `f` (nullptr: flush) and writes every packet the encoder has ready.
void FrameEncoder::Impl::send(const AVFrame* f) {
    check(avcodec_send_frame(codec.get(), f), name, "avcodec_send_frame");
    for (;;) {
        const int rc = avcodec_receive_packet(codec.get(), packet.get());
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
        check(rc, name, "avcodec_receive_packet");
        writePacket();
    }
}

void FrameEncoder::Impl::writePacket() {
    if (format == VideoFormat::PngFolder) {
        std::array<char, 32> fileName{};
        std::snprintf(fileName.data(), fileName.size(), "frame_%05d.png", pngsWritten);
        const std::string file = (std::filesystem::path(path) / fileName.data()).string();
        const auto size = static_cast<std::size_t>(packet->size);
        const auto* data = reinterpret_cast<const char*>(packet->data);
        try {
            writeNewFile(file, data, size);
        } catch (...) {
            av_packet_unref(packet.get());
            throw;
        }
        av_packet_unref(packet.get());
        ++pngsWritten;
        return;
    }
    av_packet_rescale_ts(packet.get(), codec->time_base, stream->time_base);
    packet->stream_index = stream->index;
    // Takes the packet's data (the packet is left blank) also on failure.
    check(av_interleaved_write_frame(output.get(), packet.get()), name,
          "av_interleaved_write_frame");
}

FrameEncoder::FrameEncoder(VideoFormat format, const std::string& path, int width, int height,
                           int fps, const GifPalette* palette, const std::string& shownAs)
    : d_(std::make_unique<Impl>()) {
    // The encoders' statistics and banners are not the tool's output; errors still show.
    av_log_set_level(AV_LOG_ERROR);
    d_->format = format;
    d_->path = path;
    d_->name = shownAs.empty() ? path : shownAs;
    const std::string& name = d_->name;
    d_->width = width;
    d_->height = height;
    d_->fps = fps;
    if (width <= 0 || height <= 0 || fps <= 0) {
        fail("cannot write", name, "FrameEncoder", "no frame size or rate");
    }
    switch (format) {
        case VideoFormat::Gif:
            if (palette == nullptr) fail("cannot write", name, "FrameEncoder", "no GIF palette");
            d_->palette = *palette;
            d_->openMuxer("gif");
            d_->openCodec(AV_CODEC_ID_GIF, AV_PIX_FMT_PAL8);
            break;
        case VideoFormat::Mp4:
            if (width % 2 != 0 || height % 2 != 0) {
                fail("cannot write", name, "FrameEncoder", "H.264 needs an even width and height");
            }
            d_->openMuxer("mp4");
            d_->openCodec(AV_CODEC_ID_H264, AV_PIX_FMT_YUV420P);
            break;
        case VideoFormat::PngFolder:
            d_->openCodec(AV_CODEC_ID_PNG, AV_PIX_FMT_RGB24);
            return;
    }
    AVFormatContext* out = d_->output.get();
    d_->stream = checkNotNull(avformat_new_stream(out, nullptr), name, "avformat_new_stream");
    check(avcodec_parameters_from_context(d_->stream->codecpar, d_->codec.get()), name,
          "avcodec_parameters_from_context");
    d_->stream->time_base = d_->codec->time_base;
    d_->stream->avg_frame_rate = AVRational{fps, 1};
    check(avio_open(&out->pb, path.c_str(), AVIO_FLAG_WRITE), name, "avio_open");
    AVDictionary* options = nullptr;
    if (format == VideoFormat::Mp4) {
        // The index at the front: a browser plays the file before it has all of it.
        check(av_dict_set(&options, "movflags", "+faststart", 0), name, "av_dict_set");
    }
    const int rc = avformat_write_header(out, &options);
    av_dict_free(&options);
    check(rc, name, "avformat_write_header");
}

FrameEncoder::~FrameEncoder() = default;

void FrameEncoder::addFrame(const FrameView& f) {
    if (d_->finished) fail("cannot write", d_->name, "addFrame", "the encoder has finished");
    if (f.width != d_->width || f.height != d_->height || f.bgrx == nullptr) {
        fail("cannot write", d_->name, "addFrame",
             "a frame of " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                 " pixels, not " + std::to_string(d_->width) + "x" + std::to_string(d_->height));
    }
    d_->convert(f);
    d_->frame->pts = d_->frames;
    d_->send(d_->frame.get());
    ++d_->frames;
}

void FrameEncoder::finish() {
    if (d_->finished) return;
    d_->send(nullptr);
    d_->finished = true;
    if (!d_->output) return;
    check(av_write_trailer(d_->output.get()), d_->name, "av_write_trailer");
    // Closing flushes the last buffered bytes: a full disk shows here.
    check(avio_closep(&d_->output->pb), d_->name, "avio_closep");
}

int FrameEncoder::framesWritten() const {
    return d_->frames;
}

// ---- probeVideo ----

VideoInfo probeVideo(const std::string& path) {
    AVFormatContext* raw = nullptr;
    readCheck(avformat_open_input(&raw, path.c_str(), nullptr, nullptr), path,
              "avformat_open_input");
    const InputPtr input(raw);
    readCheck(avformat_find_stream_info(input.get(), nullptr), path, "avformat_find_stream_info");
    const AVCodec* decoder = nullptr;
    const int index =
        readCheck(av_find_best_stream(input.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0), path,
                  "av_find_best_stream");
    const AVStream* stream = input->streams[index];
    const CodecContextPtr codec(avcodec_alloc_context3(decoder));
    if (!codec) fail("cannot read", path, "avcodec_alloc_context3", "out of memory");
    readCheck(avcodec_parameters_to_context(codec.get(), stream->codecpar), path,
              "avcodec_parameters_to_context");
    readCheck(avcodec_open2(codec.get(), decoder, nullptr), path, "avcodec_open2");
    const PacketPtr packet(av_packet_alloc());
    const FramePtr frame(av_frame_alloc());
    if (!packet || !frame) fail("cannot read", path, "av_packet_alloc", "out of memory");
    VideoInfo info;
    info.format = input->iformat->name;
    info.codec = decoder->name;
    info.width = stream->codecpar->width;
    info.height = stream->codecpar->height;
    auto drain = [&] {
        for (;;) {
            const int rc = avcodec_receive_frame(codec.get(), frame.get());
            if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
            readCheck(rc, path, "avcodec_receive_frame");
            ++info.frames;
            av_frame_unref(frame.get());
        }
    };
    for (;;) {
        const int rc = av_read_frame(input.get(), packet.get());
        if (rc == AVERROR_EOF) break;
        readCheck(rc, path, "av_read_frame");
        if (packet->stream_index == index) {
            const int sent = avcodec_send_packet(codec.get(), packet.get());
            av_packet_unref(packet.get());
            readCheck(sent, path, "avcodec_send_packet");
            drain();
        } else {
            av_packet_unref(packet.get());
        }
    }
    readCheck(avcodec_send_packet(codec.get(), nullptr), path, "avcodec_send_packet");
    drain();
    if (input->duration != AV_NOPTS_VALUE && input->duration > 0) {
        info.durationSeconds = static_cast<double>(input->duration) / AV_TIME_BASE;
    } else if (stream->duration != AV_NOPTS_VALUE) {
        info.durationSeconds = static_cast<double>(stream->duration) * av_q2d(stream->time_base);
    }
    return info;
}

}  // namespace pipelens::video
