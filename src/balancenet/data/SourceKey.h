// SourceKey: what identifies a source's contents, for caches computed from them (normalisation).
#pragma once
#include <string>
#include <vector>

namespace balancenet::data {

// "source|path:size:mtime|..." over `paths` (made absolute): any change of path, size or modification
// time gives another key. A file that cannot be stat'ed contributes "path:?" (opening it reports that).
std::string sourceKey(const std::string& source, const std::vector<std::string>& paths);

}  // namespace balancenet::data
