//===- Philox.cpp - Philox4x32-10 counter-based random numbers -----------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Philox.h"

using namespace qtrain::rt;

namespace {
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

/// One Philox4x32 round with key (k0, k1).
PhiloxCounter philoxRound(const PhiloxCounter &c, uint32_t k0, uint32_t k1) {
  uint64_t p0 = uint64_t(kMul0) * c[0];
  uint64_t p1 = uint64_t(kMul1) * c[2];
  uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
  uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
  return {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
}
} // namespace

PhiloxCounter qtrain::rt::philox4x32(const PhiloxCounter &counter,
                                     const PhiloxKey &key, unsigned rounds) {
  PhiloxCounter c = counter;
  uint32_t k0 = key[0], k1 = key[1];
  for (unsigned r = 0; r < rounds; ++r) {
    if (r != 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    c = philoxRound(c, k0, k1);
  }
  return c;
}

float qtrain::rt::uniformNoise(uint32_t word) {
  // 2^-24 as a float literal (exact).
  constexpr float kTwoPowMinus24 = 5.9604644775390625e-08f;
  return float(word >> 8) * kTwoPowMinus24 - 0.5f;
}

PhiloxKey PhiloxStream::key() const {
  return {uint32_t(seed), uint32_t(seed >> 32)};
}

PhiloxCounter PhiloxStream::counter(uint64_t blockIndex) const {
  return {uint32_t(blockIndex), uint32_t(blockIndex >> 32), streamId, step};
}

PhiloxCounter PhiloxStream::block(uint64_t blockIndex) const {
  return philox4x32(counter(blockIndex), key());
}

uint32_t PhiloxStream::word(uint64_t index) const {
  return block(index / 4)[index % 4];
}

float PhiloxStream::noise(uint64_t index) const {
  return uniformNoise(word(index));
}

void PhiloxStream::fillNoise(uint64_t firstIndex, float *out,
                             size_t count) const {
  size_t j = 0;
  while (j < count) {
    uint64_t index = firstIndex + j;
    PhiloxCounter words = block(index / 4);
    for (unsigned w = unsigned(index % 4); w < 4 && j < count; ++w, ++j)
      out[j] = uniformNoise(words[w]);
  }
}
