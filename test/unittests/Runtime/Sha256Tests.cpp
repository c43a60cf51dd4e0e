//===- Sha256Tests.cpp - SHA-256 known-answer tests -----------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The SHA-256 that checks bundle libraries and ABI digests, against the
/// known answers of FIPS 180-4's examples (NIST's SHA-256 example vectors),
/// one-shot and fed in pieces that straddle the 64-byte blocks and the
/// padding's length field.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Sha256.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace qtrain::rt;

namespace {

struct KnownAnswer {
  std::string message;
  const char *digest;
};

std::vector<KnownAnswer> knownAnswers() {
  return {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc",
       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      // 448 bits: the length no longer fits in the first block.
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmn"
       "opjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
}

TEST(Sha256Test, KnownAnswersOneShot) {
  for (const KnownAnswer &k : knownAnswers())
    EXPECT_EQ(sha256Hex(k.message.data(), k.message.size()), k.digest)
        << k.message.size() << " bytes";
}

TEST(Sha256Test, KnownAnswersInPieces) {
  // Piece sizes that land on, before and after block boundaries.
  for (size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 1000u})
    for (const KnownAnswer &k : knownAnswers()) {
      Sha256 h;
      for (size_t at = 0; at < k.message.size(); at += piece)
        h.update(k.message.data() + at, std::min(piece, k.message.size() - at));
      EXPECT_EQ(h.hexDigest(), k.digest)
          << k.message.size() << " bytes in pieces of " << piece;
    }
}

} // namespace
