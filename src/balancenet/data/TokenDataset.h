// TokenDataset: the token-stream formats, tokens:FILE, tokens32:FILE and text:FILE, as windows of --context.
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/data/DataOptions.h"
#include "balancenet/data/Dataset.h"

namespace balancenet::data {

inline constexpr int32_t kLlmcMagic = 20240520;  // llm.c's token files: a 256 x int32 header first
inline constexpr int64_t kLlmcHeaderBytes = 256 * 4;
inline constexpr int64_t kVocabMultiple = 64;  // tokens: vocabulary = largest id + 1, rounded up to this
inline constexpr int64_t kMaxVocab = int64_t{1} << 24;

// The three spellings open the same kind of dataset: sample i is tokens [i*T, i*T+T) of its split as int64
// inputs [T] and tokens [i*T+1, i*T+T+1) as targets (the next token of each position), T = options.context.
// The held-out split is the end of the file: its last heldOutCount(W, valFraction) windows of the W the
// whole file holds, with their one extra target token; the training split is the tokens before it. Both read
// the file through mmap. Throws UsageError with one line naming the file for a missing --context, a file
// that is not of its format, or one too short for a whole window in each split.
//
// tokens:FILE  uint16 token ids (nanoGPT's train.bin), or llm.c's format, recognised by its header (int32
//              magic 20240520, version 1 = uint16 or 2 = uint32 tokens, token count, 253 unused). Vocabulary:
//              the largest id + 1 rounded up to a multiple of 64 (GPT-2's 50257 -> 50304, as nanoGPT pads).
DatasetPair openTokens(const std::string& path, const DataOptions& options);
// tokens32:FILE  headerless uint32 token ids (vocabularies above 65536); vocabulary as tokens:.
DatasetPair openTokens32(const std::string& path, const DataOptions& options);
// text:FILE  the file's bytes are the tokens, vocabulary 256 (spec.bytesAsTokens: loss / ln 2 = bits per byte).
DatasetPair openText(const std::string& path, const DataOptions& options);

}  // namespace balancenet::data
