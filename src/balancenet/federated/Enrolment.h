// Enrolment: what `federate join` tells the server about itself (never its data), what the server publishes
// about its model so that a client builds the same one for its own data, and the server's answer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace balancenet::federated {

// A model's shape: its flat size and a hash of its parameters' names and shapes. Two processes that built
// the same architecture for data of the same classes and input shape have the same signature.
struct ModelSignature {
  int64_t size = 0;
  uint64_t hash = 0;
  bool operator==(const ModelSignature& o) const { return size == o.size && hash == o.hash; }
};

// The server's model as a client needs it: the zoo name and the options that shape it (the data's input
// shape and classes come from the client's own data), and the seed of the local batches.
struct ServedModel {
  std::string name;
  double width = 1;
  double dropout = -1;
  int64_t layers = 6, heads = 6, embed = 384;
  uint64_t seed = 1;
};

struct Enrolment {
  std::string name;                  // --name: the same name after a restart gets the same client id back
  int64_t samples = 0;               // its training split's samples (FedAvg's weight)
  std::vector<int64_t> labelCounts;  // per class (one entry when the data has no classes)
  ModelSignature signature;          // of the model it built for its data
  std::string model;                 // its --model, when given ("" otherwise)
};

struct EnrolmentReply {
  bool accepted = false;
  int client = -1;  // the id it takes (accepted)
  std::string why;  // why it was refused
};

std::string encodeServedModel(const ServedModel& m);
std::string encodeEnrolment(const Enrolment& e);
std::string encodeReply(const EnrolmentReply& r);
// Throw RuntimeFailure for bytes that are not such a record.
ServedModel decodeServedModel(const std::string& text);
Enrolment decodeEnrolment(const std::string& text);
EnrolmentReply decodeReply(const std::string& text);

// Why the server refuses `e` (another model asked for, another model shape, no samples), or nothing.
std::optional<std::string> enrolmentRefusal(const Enrolment& e, const std::string& serverModel,
                                            const ModelSignature& serverSignature);

// The store's keys of `federate serve` (under the job's keys): the served model, the enrolment requests (a
// counter, then request k and its reply k), and the mark of a finished server.
inline constexpr const char* kServedModelKey = "serve/model";
inline constexpr const char* kRequestCountKey = "serve/requests";
inline constexpr const char* kServerFinishedKey = "serve/finished";
inline std::string requestKey(int64_t k) { return "serve/request/" + std::to_string(k); }
inline std::string replyKey(int64_t k) { return "serve/reply/" + std::to_string(k); }

inline std::vector<uint8_t> recordBytes(const std::string& s) { return {s.begin(), s.end()}; }
inline std::string recordText(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

// FNV-1a 64 of `text` continued from `hash` (the signature's hash over "name:shape;" of every parameter).
uint64_t fnv1a(const std::string& text, uint64_t hash = 14695981039346656037ull);

}  // namespace balancenet::federated
