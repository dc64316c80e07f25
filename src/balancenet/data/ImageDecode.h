// ImageDecode: JPEG (libjpeg-turbo) and PNG (libpng) files to 8-bit gray or RGB pixels, the format told
// by the file's magic bytes, not its name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::data {

enum class ImageFormat { Unknown, Jpeg, Png };

// Pixels row-major, channels interleaved (HWC): channels is 1 (gray) or 3 (RGB).
struct Image {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

// What the first bytes of a file say, without decoding it.
struct ImageHeader {
  ImageFormat format = ImageFormat::Unknown;
  int64_t height = 0, width = 0;
  int64_t channels = 0;  // of the decoded image: 1 (gray, gray+alpha) or 3 (RGB, RGBA, palette)
};

ImageFormat detectImageFormat(const uint8_t* bytes, size_t size);

// Reads only the header (PNG: the IHDR chunk; JPEG: the markers up to the first scan). Throws UsageError
// naming the file when it cannot be read, is neither JPEG nor PNG, or its header does not parse.
ImageHeader readImageHeader(const std::string& path);

// Decodes a whole file. Gray+alpha becomes gray and RGBA RGB (alpha dropped, not composited, as PIL's
// convert does); palettes are expanded to RGB; 16-bit samples keep their high byte (PIL's reading of
// 16-bit RGB). Throws UsageError naming the file for a corrupt or truncated image (never exits: libjpeg's
// and libpng's error handlers are replaced by ones that return here) or a CMYK JPEG.
//
// minSide > 0: a JPEG is decoded at the smallest of libjpeg's DCT scales 1, 1/2, 1/4, 1/8 that keeps both
// sides at least minSide (PIL's Image.draft does the same): an image bound for 32x32 is decoded at 32
// rather than decoded whole and shrunk, several times faster and no less accurate than an area shrink.
// PNGs are always decoded whole.
Image decodeImage(const std::string& path, int64_t minSide = 0);
// The same from bytes in memory; `name` is what the messages call them.
Image decodeImage(const std::vector<uint8_t>& bytes, const std::string& name, int64_t minSide = 0);

}  // namespace balancenet::data
