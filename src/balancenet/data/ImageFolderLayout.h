// ImageFolderLayout: the files and classes of an imagefolder directory (torchvision's ImageFolder layout)
// and its training / held-out split.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::data {

struct ImageFile {
  std::string path;
  int64_t label = 0;
};

struct ImageFolderLayout {
  std::vector<std::string> classes;  // folder names, sorted as torchvision's find_classes sorts them
  std::vector<ImageFile> train, val;
};

// DIR/train and DIR/val when DIR/train is a folder (val/ then optional: without it the held-out set is cut
// from train/), else DIR's own class folders. Within a class, every *.jpg, *.jpeg, *.png (any case) in the
// folder and its sub-folders, sorted by folder then name (torchvision's make_dataset). The held-out cut
// takes round(n * valFraction) of each class's n files (at most n - 1) by a fixed-seed shuffle, so it is
// the same on every machine and run. Throws UsageError naming the folder: no such directory, no class
// folders, an empty class folder, val/ classes that differ from train/'s, valFraction outside [0, 1).
ImageFolderLayout scanImageFolder(const std::string& dir, double valFraction);

}  // namespace balancenet::data
