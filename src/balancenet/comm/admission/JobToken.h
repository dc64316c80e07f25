// JobToken: what a shared secret contributes to the rendezvous, derived with SHA-256 (OpenSSL).
#pragma once
#include <string>

namespace balancenet::comm {

// Where a job's keys live in the store: a name derived from the token, so a process without the token
// cannot find (let alone read or overwrite) the group's keys. Jobs without a token share one prefix.
std::string jobKeyPrefix(const std::string& token);

// What the store host publishes so a joining process can tell at once whether its token is the
// job's: a random salt and SHA-256 over it and the token ("v1:<salt>:<digest>", hex). The digest
// reveals neither the token nor the key prefix.
std::string tokenCheckRecord(const std::string& token);

// Whether `record` (from tokenCheckRecord) was made with `token`. A malformed record does not match.
bool tokenMatches(const std::string& record, const std::string& token);

// 32 random hex digits (OpenSSL's generator): a token for a job whose launcher makes one up.
std::string randomJobToken();

// SHA-256 of `bytes`, as 64 lower-case hex digits.
std::string sha256Hex(const std::string& bytes);

}  // namespace balancenet::comm
