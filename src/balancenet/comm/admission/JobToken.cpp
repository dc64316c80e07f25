// Domain-separated SHA-256: the prefix and the check record hash different inputs, so neither can be
// computed from the other without the token.
#include "balancenet/comm/admission/JobToken.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace balancenet::comm {
namespace {

constexpr const char* kPrefixDomain = "balancenet job key prefix v1";
constexpr const char* kCheckDomain = "balancenet job token check v1";
constexpr size_t kSaltBytes = 16;

std::string hex(const unsigned char* data, size_t n) {
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", data[i]);
  return out;
}

// The parts joined with NUL bytes, which no part contains in its role (a token may, but it comes last).
std::string domainDigest(const char* domain, const std::string& salt, const std::string& token) {
  return sha256Hex(std::string(domain) + '\0' + salt + '\0' + token);
}

}  // namespace

std::string sha256Hex(const std::string& bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL's SHA-256 failed");
  return hex(digest.data(), length);
}

std::string jobKeyPrefix(const std::string& token) {
  return "job-" + domainDigest(kPrefixDomain, "", token).substr(0, 32);
}

std::string tokenCheckRecord(const std::string& token) {
  std::array<unsigned char, kSaltBytes> salt{};
  if (RAND_bytes(salt.data(), static_cast<int>(salt.size())) != 1)
    throw std::runtime_error("OpenSSL could not draw random bytes for the job token's salt");
  const std::string saltHex = hex(salt.data(), salt.size());
  return fmt::format("v1:{}:{}", saltHex, domainDigest(kCheckDomain, saltHex, token));
}

std::string randomJobToken() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    throw std::runtime_error("OpenSSL could not draw random bytes for a job token");
  return hex(bytes.data(), bytes.size());
}

bool tokenMatches(const std::string& record, const std::string& token) {
  const auto first = record.find(':');
  const auto second = record.find(':', first == std::string::npos ? first : first + 1);
  if (first == std::string::npos || second == std::string::npos || record.substr(0, first) != "v1") return false;
  const std::string saltHex = record.substr(first + 1, second - first - 1);
  const std::string stored = record.substr(second + 1);
  const std::string mine = domainDigest(kCheckDomain, saltHex, token);
  // Constant time, so the comparison does not tell an observer how much of a guess was right.
  return stored.size() == mine.size() && CRYPTO_memcmp(stored.data(), mine.data(), mine.size()) == 0;
}

}  // namespace balancenet::comm
