// ImageDecode: libjpeg-turbo and libpng behind error handlers that return (setjmp/longjmp) instead of exiting.
#include "balancenet/data/ImageDecode.h"

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <jerror.h>  // JWRN_JPEG_EOF
#include <jpeglib.h>
#include <png.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/BigEndian.h"

namespace balancenet::data {

namespace {

// PIL's decompression-bomb limit (2 x 89.5M pixels): a header claiming more is refused before any allocation.
constexpr int64_t kMaxPixels = 178956970;
// A JPEG's markers before its first frame (EXIF, ICC) rarely exceed this; more is read when they do.
constexpr size_t kJpegHeaderBytes = 128 * 1024;
const uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

std::vector<uint8_t> readBytes(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot open the image file", path));
  std::vector<uint8_t> bytes;
  char buffer[65536];
  while (bytes.size() < limit && in) {
    in.read(buffer, static_cast<std::streamsize>(std::min(sizeof buffer, limit - bytes.size())));
    bytes.insert(bytes.end(), buffer, buffer + in.gcount());
  }
  if (in.bad()) throw UsageError(fmt::format("{}: cannot read the image file", path));
  return bytes;
}

void checkDimensions(int64_t height, int64_t width, const std::string& name) {
  if (height <= 0 || width <= 0 || height * width > kMaxPixels)
    throw UsageError(
        fmt::format("{}: image size {}x{} is empty or larger than {} pixels", name, width, height, kMaxPixels));
}

// ---- JPEG ----

struct JpegErrors {
  jpeg_error_mgr pub;  // first: libjpeg hands back a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpegFail(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// libjpeg only warns at a truncated file (and decodes gray where the data ends): that one is an error here,
// as in PIL; the other warnings (extraneous bytes and the like) are tolerated as PIL tolerates them.
void jpegMessage(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jpegFail(cinfo);
  if (level < 0) ++cinfo->err->num_warnings;
}

enum class JpegOutcome { Ok, Failed, Cmyk };

// Plain C data only in this frame: longjmp skips no destructor. Fills header (and pixels unless headerOnly).
JpegOutcome runJpeg(const uint8_t* data, size_t size, bool headerOnly, int64_t minSide, Image* out, char* message) {
  jpeg_decompress_struct cinfo;
  JpegErrors errors;
  cinfo.err = jpeg_std_error(&errors.pub);
  errors.pub.error_exit = jpegFail;
  errors.pub.emit_message = jpegMessage;
  if (setjmp(errors.jump)) {
    std::memcpy(message, errors.message, JMSG_LENGTH_MAX);
    jpeg_destroy_decompress(&cinfo);
    return JpegOutcome::Failed;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.num_components != 1 && cinfo.num_components != 3) {
    jpeg_destroy_decompress(&cinfo);
    return JpegOutcome::Cmyk;
  }
  out->height = cinfo.image_height;
  out->width = cinfo.image_width;
  out->channels = cinfo.num_components;
  if (headerOnly || out->height * out->width > kMaxPixels) {
    jpeg_destroy_decompress(&cinfo);
    return JpegOutcome::Ok;
  }
  cinfo.out_color_space = out->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  if (minSide > 0) {
    // libjpeg's output side at scale 1/d is ceil(side / d).
    const int64_t shorter = std::min(out->height, out->width);
    for (unsigned d : {8u, 4u, 2u})
      if ((shorter + d - 1) / d >= minSide) {
        cinfo.scale_num = 1;
        cinfo.scale_denom = d;
        break;
      }
  }
  jpeg_start_decompress(&cinfo);
  out->height = cinfo.output_height;
  out->width = cinfo.output_width;
  const size_t stride = static_cast<size_t>(cinfo.output_width) * static_cast<size_t>(cinfo.output_components);
  out->pixels.resize(stride * cinfo.output_height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out->pixels.data() + stride * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return JpegOutcome::Ok;
}

Image jpeg(const uint8_t* data, size_t size, bool headerOnly, const std::string& name, int64_t minSide = 0) {
  Image image;
  char message[JMSG_LENGTH_MAX] = {};
  switch (runJpeg(data, size, headerOnly, minSide, &image, message)) {
    case JpegOutcome::Failed:
      throw UsageError(fmt::format("{}: corrupt or truncated JPEG ({})", name, message));
    case JpegOutcome::Cmyk:
      throw UsageError(fmt::format("{}: CMYK JPEG is not supported (convert it to RGB)", name));
    case JpegOutcome::Ok:
      break;
  }
  checkDimensions(image.height, image.width, name);
  return image;
}

// ---- PNG ----

struct PngSource {
  const uint8_t* data;
  size_t size, offset;
};

void pngRead(png_structp png, png_bytep out, png_size_t length) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (source->size - source->offset < length) png_error(png, "truncated PNG file");
  std::memcpy(out, source->data + source->offset, length);
  source->offset += length;
}

void pngFail(png_structp png, png_const_charp text) {
  std::snprintf(static_cast<char*>(png_get_error_ptr(png)), 200, "%s", text);
  png_longjmp(png, 1);
}

void pngWarning(png_structp, png_const_charp) {}  // ancillary-chunk complaints: PIL ignores them too

// Plain C data only in this frame (see runJpeg). Returns false with `message` set on any libpng error.
bool runPng(const uint8_t* data, size_t size, Image* out, char* message) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, message, pngFail, pngWarning);
  if (!png) return false;
  png_infop info = png_create_info_struct(png);
  png_bytep* volatile rows = nullptr;  // volatile: set after setjmp, read after a longjmp
  PngSource source{data, size, 0};
  if (!info || setjmp(png_jmpbuf(png))) {
    std::free(rows);
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    return false;
  }
  png_set_read_fn(png, &source, pngRead);
  png_read_info(png, info);
  const int64_t height = png_get_image_height(png, info), width = png_get_image_width(png, info);
  if (height <= 0 || width <= 0 || height * width > kMaxPixels) png_error(png, "image too large");
  png_set_strip_16(png);  // the high byte, as PIL reads 16-bit RGB
  png_set_palette_to_rgb(png);
  png_set_expand_gray_1_2_4_to_8(png);
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int channels = png_get_channels(png, info);
  if (channels != 1 && channels != 3) png_error(png, "unexpected channel count after conversion");
  const size_t stride = static_cast<size_t>(width) * static_cast<size_t>(channels);
  if (png_get_rowbytes(png, info) != stride) png_error(png, "unexpected row size after conversion");
  out->height = height;
  out->width = width;
  out->channels = channels;
  out->pixels.resize(stride * static_cast<size_t>(height));
  rows = static_cast<png_bytep*>(std::malloc(sizeof(png_bytep) * static_cast<size_t>(height)));
  if (!rows) png_error(png, "out of memory");
  for (int64_t y = 0; y < height; ++y) rows[y] = out->pixels.data() + stride * static_cast<size_t>(y);
  png_read_image(png, rows);
  png_read_end(png, nullptr);
  std::free(rows);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

// The IHDR chunk, which the PNG specification places first: width, height, bit depth, colour type.
ImageHeader pngHeader(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (bytes.size() < 29 || std::memcmp(bytes.data() + 12, "IHDR", 4) != 0 || bigEndian32(bytes.data() + 8) != 13)
    throw UsageError(fmt::format("{}: corrupt PNG header (no IHDR chunk)", name));
  ImageHeader header{ImageFormat::Png, bigEndian32(bytes.data() + 20), bigEndian32(bytes.data() + 16), 0};
  const int depth = bytes[24], colour = bytes[25];
  const bool depthOk = depth == 8 || (depth == 16 && colour != 3) ||
                       (depth < 8 && (colour == 0 || colour == 3) && (depth == 1 || depth == 2 || depth == 4));
  if (!depthOk || (colour != 0 && colour != 2 && colour != 3 && colour != 4 && colour != 6))
    throw UsageError(fmt::format("{}: corrupt PNG header (bit depth {}, colour type {})", name, depth, colour));
  header.channels = colour == 0 || colour == 4 ? 1 : 3;
  checkDimensions(header.height, header.width, name);
  return header;
}

}  // namespace

ImageFormat detectImageFormat(const uint8_t* bytes, size_t size) {
  if (size >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) return ImageFormat::Jpeg;
  if (size >= 8 && std::memcmp(bytes, kPngSignature, 8) == 0) return ImageFormat::Png;
  return ImageFormat::Unknown;
}

ImageHeader readImageHeader(const std::string& path) {
  std::vector<uint8_t> bytes = readBytes(path, kJpegHeaderBytes);
  switch (detectImageFormat(bytes.data(), bytes.size())) {
    case ImageFormat::Png:
      return pngHeader(bytes, path);
    case ImageFormat::Jpeg: {
      // A header longer than what was read looks truncated: read the whole file before concluding it is.
      if (bytes.size() == kJpegHeaderBytes) {
        try {
          const Image image = jpeg(bytes.data(), bytes.size(), /*headerOnly=*/true, path);
          return {ImageFormat::Jpeg, image.height, image.width, image.channels};
        } catch (const UsageError&) {
          bytes = readBytes(path, SIZE_MAX);
        }
      }
      const Image image = jpeg(bytes.data(), bytes.size(), /*headerOnly=*/true, path);
      return {ImageFormat::Jpeg, image.height, image.width, image.channels};
    }
    case ImageFormat::Unknown:
      break;
  }
  throw UsageError(fmt::format("{}: not a JPEG or PNG image", path));
}

Image decodeImage(const std::vector<uint8_t>& bytes, const std::string& name, int64_t minSide) {
  switch (detectImageFormat(bytes.data(), bytes.size())) {
    case ImageFormat::Jpeg:
      return jpeg(bytes.data(), bytes.size(), /*headerOnly=*/false, name, minSide);
    case ImageFormat::Png: {
      Image image;
      char message[200] = {};
      if (!runPng(bytes.data(), bytes.size(), &image, message))
        throw UsageError(fmt::format("{}: corrupt or truncated PNG ({})", name, message));
      return image;
    }
    case ImageFormat::Unknown:
      break;
  }
  throw UsageError(fmt::format("{}: not a JPEG or PNG image", name));
}

Image decodeImage(const std::string& path, int64_t minSide) {
  return decodeImage(readBytes(path, SIZE_MAX), path, minSide);
}

}  // namespace balancenet::data
