// Partition: which contiguous blocks of the model each pipeline stage runs.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace balancenet::pipeline {

struct StageRange {
  size_t first = 0;  // first block
  size_t end = 0;    // one past the last block
  size_t size() const { return end - first; }
};

struct Partition {
  std::vector<StageRange> stages;  // stage s runs blocks [stages[s].first, stages[s].end)

  int stageCount() const { return static_cast<int>(stages.size()); }
  // "0-9,10-17": the --partition syntax, inclusive ranges, as parse() reads it.
  std::string str() const;

  // Equal block counts (the first stages take one more where it does not divide). Throws UsageError when
  // there are fewer blocks than stages, naming the model's block count.
  static Partition uniform(size_t blocks, int stages);
  // `text` "0-9,10-17" (inclusive block indices; a single "4" is one block): one range per stage, in
  // order, contiguous, non-empty, covering 0..blocks-1 exactly. Throws UsageError with the first problem
  // (e.g. "--partition: stage 2 starts at block 9, expected 10").
  static Partition parse(const std::string& text, size_t blocks, int stages);
};

}  // namespace balancenet::pipeline
