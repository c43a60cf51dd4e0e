//===- Philox.h - Philox4x32-10 counter-based random numbers ----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
/// 3", SC'11; the Random123 library), the counter-based generator behind
/// stochastic rounding. A counter-based generator needs no state: the random
/// word for tensor element i at training step t is a pure function of
/// (seed, stream id, t, i), so a compiled kernel, a GPU thread or this
/// reference reproduce exactly the same noise in any order or split.
///
/// Algorithm (bit exact with Random123's philox4x32_R(10, ctr, key)):
///   multipliers M0 = 0xD2511F53, M1 = 0xCD9E8D57;
///   Weyl key increments W0 = 0x9E3779B9, W1 = 0xBB67AE85;
///   one round, with (hi, lo) the high and low words of a 32x32->64 product:
///     (hi0, lo0) = M0 * c0;  (hi1, lo1) = M1 * c2;
///     c = { hi1 ^ c1 ^ k0,  lo1,  hi0 ^ c3 ^ k1,  lo0 };
///   the key is bumped (k0 += W0, k1 += W1, mod 2^32) between rounds, i.e.
///   before rounds 2..10; the first round uses the key as given.
///
/// qtrain's stream layout (the convention every kernel must follow):
///   key     = { low 32 bits of seed, high 32 bits of seed }
///   counter = { low 32 bits of block, high 32 bits of block, streamId, step }
///   where element i of a tensor lives in block i / 4, output word i % 4.
///   `streamId` separates independent users of noise within one step (one
///   id per quantized error tensor, say) and `step` is the training step.
///
/// Uniform noise in [-0.5, 0.5) from the 32-bit word u:
///   noise(u) = float(u >> 8) * 2^-24 - 0.5f
/// Every operation is exact in fp32 (u >> 8 < 2^24; the product is a
/// multiple of 2^-24 in [0, 1); subtracting 0.5 leaves a multiple of 2^-24
/// of magnitude <= 0.5), so the result does not depend on rounding mode or
/// FMA contraction. The values are the 2^24 points k * 2^-24 - 0.5,
/// k = 0 .. 2^24 - 1, equally likely: range [-0.5, 0.5 - 2^-24], mean
/// -2^-25 (a bias far below anything stochastic rounding can resolve).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_PHILOX_H
#define QTRAIN_RUNTIME_PHILOX_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace qtrain::rt {

/// A Philox4x32 counter (four 32-bit words, word 0 first).
using PhiloxCounter = std::array<uint32_t, 4>;
/// A Philox4x32 key (two 32-bit words, word 0 first).
using PhiloxKey = std::array<uint32_t, 2>;

/// The Philox4x32 bijection with `rounds` rounds; 10 (the default) gives
/// Philox4x32-10. Exposed with a round count so the published known-answer
/// vectors for 7 rounds can be checked too.
PhiloxCounter philox4x32(const PhiloxCounter &counter, const PhiloxKey &key,
                         unsigned rounds = 10);

/// Uniform noise in [-0.5, 0.5) from one random word:
/// float(u >> 8) * 2^-24 - 0.5f (exact; see the file comment).
float uniformNoise(uint32_t word);

/// The noise stream of one (seed, streamId, step): a pure function from an
/// element index to a random word and to noise in [-0.5, 0.5).
class PhiloxStream {
public:
  PhiloxStream(uint64_t streamSeed, uint32_t id, uint32_t trainingStep)
      : seed(streamSeed), streamId(id), step(trainingStep) {}

  uint64_t getSeed() const { return seed; }
  uint32_t getStreamId() const { return streamId; }
  uint32_t getStep() const { return step; }

  /// The key: {low 32 bits of the seed, high 32 bits of the seed}.
  PhiloxKey key() const;
  /// The counter of block `blockIndex` (elements 4*blockIndex ..
  /// 4*blockIndex+3).
  PhiloxCounter counter(uint64_t blockIndex) const;
  /// The four random words of block `blockIndex`.
  PhiloxCounter block(uint64_t blockIndex) const;

  /// The random word of element `index`: word index % 4 of block index / 4.
  uint32_t word(uint64_t index) const;
  /// uniformNoise(word(index)).
  float noise(uint64_t index) const;
  /// out[j] = noise(firstIndex + j) for j < count; one Philox call per block.
  void fillNoise(uint64_t firstIndex, float *out, size_t count) const;

private:
  uint64_t seed;
  uint32_t streamId;
  uint32_t step;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_PHILOX_H
