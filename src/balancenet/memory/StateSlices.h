// StateSlices: --shard-state's cut of the flattened parameters into one contiguous slice per worker, sized by the
// memory each worker has for optimiser state, not equal (what FSDP2 and fairscale offer). Pure.
#pragma once
#include <cstdint>
#include <vector>

namespace balancenet::memory {

// Slice sizes (in elements, summing to `elements`) for workers whose memory for state is `roomBytes` each: sizes in
// proportion to the room, by largest remainder (ties to the lower rank). A room of 0 or less means unknown: such a
// worker counts as the largest room given, and with none given every slice is equal. Every worker gets at least
// one element while there are as many elements as workers.
std::vector<int64_t> stateSlices(int64_t elements, const std::vector<double>& roomBytes);

// Where each slice starts: offsets[r] = sum of sizes before r.
std::vector<int64_t> sliceOffsets(const std::vector<int64_t>& sizes);

// One tensor's part of a flat range: elements [offset, offset + length) of tensor `tensor`, which are elements
// [flatOffset, flatOffset + length) of the range.
struct Piece {
  size_t tensor = 0;
  int64_t offset = 0;
  int64_t length = 0;
  int64_t flatOffset = 0;
};

// The pieces of tensors of `numels` elements, laid end to end, that the flat range [begin, begin + length) covers,
// in order (none for an empty range). InternalError for a range beyond the tensors.
std::vector<Piece> piecesOf(const std::vector<int64_t>& numels, int64_t begin, int64_t length);

}  // namespace balancenet::memory
