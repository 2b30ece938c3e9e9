#pragma once
// Frames to an animated GIF, an H.264 MP4 or a folder of numbered PNGs, with FFmpeg's libraries
// (libavcodec, libavformat, libswscale). No Qt here: a frame is 32-bit pixels in memory as Qt's
// QImage::Format_RGB32 lays them out on a little-endian machine (bytes B, G, R, 0xff).
//
// GIF frames are PAL8: a 256-colour palette (GifPalette) computed once from a few sample frames
// by popularity over 5-5-5 quantised pixels, each pixel mapped through a 32768-entry table. Chart
// colours are few (flat fills, a handful of line and text colours), so this keeps them exact
// where it matters. Every FFmpeg call is checked; a failure throws IoError naming the call.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pipelens::video {

enum class VideoFormat { Gif, Mp4, PngFolder };

// One frame's pixels (not owned): `height` rows of `strideBytes`, each `width` pixels B, G, R, X.
struct FrameView {
    const std::uint8_t* bgrx = nullptr;
    int width = 0;
    int height = 0;
    int strideBytes = 0;
};

// 255 opaque colours and one transparent entry (index kTransparent, never used by a pixel: it
// lets the GIF encoder mark pixels unchanged since the previous frame), and the table that maps
// a 5-5-5 quantised colour to its nearest palette entry.
class GifPalette {
  public:
    static constexpr int kTransparent = 255;
    // From the most frequent quantised colours of `samples` (each entry the mean of the pixels
    // in its bin, so white stays exactly white).
    static GifPalette fromSamples(const std::vector<FrameView>& samples);

    // Palette entries as FFmpeg's PAL8 wants them: 0xAARRGGBB in native order.
    const std::array<std::uint32_t, 256>& argb() const { return argb_; }
    std::uint8_t indexOf(std::uint8_t b, std::uint8_t g, std::uint8_t r) const {
        return lut_[((r >> 3U) << 10U) | ((g >> 3U) << 5U) | (b >> 3U)];
    }
    // Maps one row of B, G, R, X pixels to palette indices.
    void mapRow(const std::uint8_t* bgrx, std::uint8_t* indices, int width) const;
    int colours() const { return colours_; }  // opaque entries in use

  private:
    std::array<std::uint32_t, 256> argb_{};
    std::vector<std::uint8_t> lut_;  // 32768 entries
    int colours_ = 0;
};

// Writes frames as they come. `path` is the file (GIF, MP4), written under exactly that name
// (the caller gives a temporary name and renames it), or the folder that receives
// frame_00000.png, frame_00001.png, ... (which must exist). Throws IoError.
class FrameEncoder {
  public:
    // `palette` is required for a GIF (and ignored otherwise). Width and height must be even
    // for MP4 (4:2:0 chroma). Messages name the output `shownAs` when given (the name the
    // temporary `path` will be renamed to).
    FrameEncoder(VideoFormat format, const std::string& path, int width, int height, int fps,
                 const GifPalette* palette = nullptr, const std::string& shownAs = {});
    ~FrameEncoder();
    FrameEncoder(const FrameEncoder&) = delete;
    FrameEncoder& operator=(const FrameEncoder&) = delete;

    // The frame must have the encoder's width and height.
    void addFrame(const FrameView& frame);
    // Flushes the encoder and writes the file's trailer. Without it the output is incomplete.
    void finish();
    int framesWritten() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

// What a video file holds, read back with libavformat / libavcodec (tests and the benchmark):
// the first video stream's size, its frames (every packet decoded) and its duration.
struct VideoInfo {
    std::string format;  // the demuxer's name, e.g. "gif", "mov,mp4,m4a,3gp,3g2,mj2"
    std::string codec;   // e.g. "gif", "h264"
    int width = 0;
    int height = 0;
    int frames = 0;  // frames decoded
    double durationSeconds = 0.0;
};
// Throws IoError when the file cannot be opened or decoded.
VideoInfo probeVideo(const std::string& path);

}  // namespace pipelens::video
