// Dataset: what every data format gives the engine: the shape and kind of its samples, and batches by index.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/data/Draw.h"

namespace balancenet::data {

// What a sample's target is; the loss and the metrics follow from it (objective/Objective.h).
enum class TargetKind {
  Class,       // int64 scalar in [0, classes): cross-entropy, accuracy
  Tokens,      // int64 [T], the next token of each input position: cross-entropy per token, perplexity
  Regression,  // float32 of targetShape: mean squared error
};

struct DatasetSpec {
  std::vector<int64_t> inputShape;  // per sample: {C,H,W} for images, {T} for token windows, any for npy
  bool tokenInput = false;          // inputs are int64 token ids in [0, classes) (else float32)
  TargetKind target = TargetKind::Class;
  int64_t classes = 0;               // class count (Class) or vocabulary (Tokens); 0 for Regression
  std::vector<int64_t> targetShape;  // per sample: {} for Class, {T} for Tokens, any for Regression
  bool bytesAsTokens = false;        // text: tokens are bytes, so bits per byte = loss / ln 2
  std::string source;                // "FORMAT:PATH" as given, for messages
};

// One batch: inputs [n, inputShape...] (float32, or int64 tokens) and targets [n, targetShape...].
struct Batch {
  at::Tensor inputs;
  at::Tensor targets;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual const DatasetSpec& spec() const = 0;
  virtual int64_t size() const = 0;
  // The samples at `indices`, in that order, without augmentation (evaluation). Thread-safe.
  virtual Batch batch(const std::vector<int64_t>& indices) const = 0;
  // Training samples, augmented where the dataset was opened with augmentation. Thread-safe. The
  // default (no augmentation) is batch() of the indices.
  virtual Batch trainingBatch(const std::vector<Draw>& draws) const;
  // Each sample's class (federated label shards, label counts); empty unless the target is a class.
  virtual std::vector<int64_t> classLabels() const { return {}; }
  // Samples that could not be decoded when first read and were replaced (imagefolder); 0 elsewhere.
  virtual int64_t skippedSamples() const { return 0; }
};

// The training and the held-out set of one source.
struct DatasetPair {
  std::shared_ptr<const Dataset> train;
  std::shared_ptr<const Dataset> test;
};

// The indices begin, begin + 1, ..., end - 1 (evaluation reads sets in order).
std::vector<int64_t> indexRange(int64_t begin, int64_t end);

// The samples of `base` at `indices`, renumbered 0..n-1 (federated client shards).
std::shared_ptr<const Dataset> subsetOf(std::shared_ptr<const Dataset> base, std::vector<int64_t> indices);

// --eval-samples's value for the whole test set (its default).
inline constexpr int64_t kAllSamples = -1;

// `count` distinct indices of [0, size), in increasing order, drawn for `seed` the same on every platform (a
// partial Fisher-Yates); all of them when count >= size.
std::vector<int64_t> seededSampleIndices(int64_t size, int64_t count, uint64_t seed);

// The set an evaluation of `samples` test samples reads (--eval-samples): all of `test` when samples is
// kAllSamples or at least its size, none (null) when 0, else the seededSampleIndices subset. Null `test` stays null.
std::shared_ptr<const Dataset> evaluationSet(std::shared_ptr<const Dataset> test, int64_t samples, uint64_t seed);

}  // namespace balancenet::data
