// ImageFixtures: image files written by PIL (tests/unit/data/write_test_images.py) and its decoded pixels.
#pragma once
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "balancenet/data/ImageDecode.h"

namespace balancenet::data {

// Runs write_test_images.py with Debian's python3 (PIL and numpy are there, not in a pyenv python3).
inline void writeTestImages(const std::string& args) {
  const std::string command = std::string(BALANCENET_PYTHON_EXE) + " " + BALANCENET_SOURCE_DIR +
                              "/tests/unit/data/write_test_images.py " + args;
  ASSERT_EQ(std::system(command.c_str()), 0) << command << " failed (is python3-pil installed?)";
}

// A NAME.ref file: "H W C\n" then the pixels.
inline Image readReference(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Image image;
  in >> image.height >> image.width >> image.channels;
  in.get();
  image.pixels.resize(static_cast<size_t>(image.height * image.width * image.channels));
  in.read(reinterpret_cast<char*>(image.pixels.data()), static_cast<std::streamsize>(image.pixels.size()));
  if (!in) ADD_FAILURE() << "cannot read " << path;
  return image;
}

}  // namespace balancenet::data
