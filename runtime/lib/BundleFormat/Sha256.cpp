//===- Sha256.cpp - SHA-256 of a byte stream -----------------------------===//
//
// Part of the qtrain project.
//
// FIPS 180-4, section 6.2: 64-byte blocks, a message schedule of 64 words,
// 64 rounds with the constants K (the first 32 bits of the fractional parts
// of the cube roots of the first 64 primes), padding with 0x80, zeros and
// the bit length as a big-endian 64-bit number.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Sha256.h"

#include "qtrain/runtime/File.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace qtrain::rt;

namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

} // namespace

Sha256::Sha256()
    : state{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
            0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const uint8_t *data) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = uint32_t(data[4 * t]) << 24 | uint32_t(data[4 * t + 1]) << 16 |
           uint32_t(data[4 * t + 2]) << 8 | uint32_t(data[4 * t + 3]);
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4],
           f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t choose = (e & f) ^ (~e & g);
    uint32_t t1 = h + sum1 + choose + kRound[t] + w[t];
    uint32_t sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = sum0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void Sha256::update(const void *data, size_t size) {
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  length += uint64_t(size);
  while (size > 0) {
    size_t take = std::min(size, buffer.size() - buffered);
    std::memcpy(buffer.data() + buffered, bytes, take);
    buffered += take;
    bytes += take;
    size -= take;
    if (buffered == buffer.size()) {
      block(buffer.data());
      buffered = 0;
    }
  }
}

std::string Sha256::hexDigest() {
  uint64_t bits = length * 8;
  uint8_t pad = 0x80;
  update(&pad, 1);
  uint8_t zero = 0;
  while (buffered != 56)
    update(&zero, 1);
  uint8_t tail[8];
  for (int i = 0; i < 8; ++i)
    tail[i] = uint8_t(bits >> (56 - 8 * i));
  update(tail, 8);
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (uint32_t word : state)
    for (int shift = 28; shift >= 0; shift -= 4)
      hex += digits[(word >> shift) & 0xf];
  return hex;
}

std::string qtrain::rt::sha256Hex(const void *data, size_t size) {
  Sha256 hash;
  hash.update(data, size);
  return hash.hexDigest();
}

Status qtrain::rt::sha256File(const std::string &path, std::string &hex) {
  std::FILE *file;
  if (Status s = openRegularFile(path, file); s.failed())
    return s;
  Sha256 hash;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    hash.update(chunk, n);
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed)
    return Status::error(path + ": read error");
  hex = hash.hexDigest();
  return Status::success();
}
