//===- LdpGradCheck.cpp - LDP precision gradients vs finite differences ---===//
//
// qtrain-ldp-gradcheck BUNDLE: checks the gradient of the loss with respect
// to each learnable precision p_l of an LDP bundle (PAPERS.md section 3)
// against central finite differences of the straight-through formulation.
// Weight decay is on (0.5) and must not touch the precisions.
//
// The bundle must be a two-layer perceptron (examples/models/mlp.mlir)
// compiled with --policy=ldp --grad-bits=16: 16-bit errors, whose
// stochastic rounding (a relative noise near 2^-16) keeps the compiled
// gradient within the tolerance of the exact gradient of the formulation.
// One training step with lr = 1 and momentum 0 gives dL/dp_l = p_l - p_l'.
// The reference evaluates, in double,
//
//   L(p) = CE(z) + lambda * sum_l MACs_l b_l^2 / (sum_l MACs_l 32^2)
//   b_l  = (max - min) p_l + min                      (round, clamp: STE)
//   x^   = x + s(b) r,  s(b) = range / (2^b - 1)      (round: STE)
//
// for every quantized tensor x (the layers' inputs per tensor, their
// weights per output channel), with r = q - (x - mn) / s and the ranges
// frozen at the step's point, where x^ is the quantizer's output
// (Quantize.h, bit for bit). At p_l chosen so that b_l is an integer, L is
// the compiled step's loss and its derivative is what the compiled reverse
// rules compute: -(2^b ln 2 / (2^b - 1)) sum(dL/dx^ (x^ - x)) through the
// scale, plus the cost term.
//
// Prints both gradients and the loss per precision; exits 1 when a
// relative difference exceeds the tolerance (default 1e-3).
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Quantize.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Trainer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace rt = qtrain::rt;

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "qtrain-ldp-gradcheck: %s\n", message.c_str());
  std::exit(2);
}

/// A quantized tensor frozen at the step's point: x^ = x + s(b) r per
/// group (the whole tensor, or a row of a per-channel weight).
struct Frozen {
  std::vector<double> x, r;
  /// Per group: its range (max - min); groups are `rows` equal slices.
  std::vector<double> range;
  int64_t rows = 1;

  /// x^ at a real-valued bitwidth.
  std::vector<double> at(double bits) const {
    std::vector<double> out(x.size());
    int64_t per = int64_t(x.size()) / rows;
    double levels = std::exp2(bits) - 1.0;
    for (int64_t g = 0; g < rows; ++g) {
      double s = range[size_t(g)] / levels;
      for (int64_t i = g * per; i < (g + 1) * per; ++i)
        out[size_t(i)] = x[size_t(i)] + s * r[size_t(i)];
    }
    return out;
  }
};

/// Freezes `x` (rows groups) quantized at `bits` with nearest rounding, and
/// checks that x^ is the reference quantizer's output.
Frozen freeze(const std::vector<float> &x, int64_t rows, int bits) {
  Frozen f;
  f.rows = rows;
  f.x.assign(x.begin(), x.end());
  f.r.resize(x.size());
  int64_t per = int64_t(x.size()) / rows;
  for (int64_t g = 0; g < rows; ++g) {
    rt::FiniteRange range = rt::finiteRange(x.data() + g * per, size_t(per));
    rt::QuantGrid grid;
    if (rt::makeQuantGrid(range.min, range.max, bits, grid).failed())
      fail("cannot build a quantization grid");
    if (grid.scale <= rt::kMinQuantScale)
      fail("a constant slice: the scale is clamped, no gradient to check");
    // range / L is the grid's f32 scale at the step's bits, so that
    // x^ = x + s(b) r is the quantizer's output there.
    f.range.push_back(double(grid.scale) * double(grid.levels));
    for (int64_t i = g * per; i < (g + 1) * per; ++i) {
      float v = (x[size_t(i)] - grid.min) / grid.scale;
      v = std::fmin(std::fmax(v, 0.0f), grid.levels);
      float q = std::nearbyint(v);
      // x^ = q s + mn = x + s (q - (x - mn) / s): r in exact arithmetic.
      double exact =
          (double(x[size_t(i)]) - double(grid.min)) / double(grid.scale);
      f.r[size_t(i)] = double(q) - exact;
    }
  }
  return f;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    fail("usage: qtrain-ldp-gradcheck BUNDLE [tolerance]");
  double tolerance = argc > 2 ? std::atof(argv[2]) : 1e-3;
  std::unique_ptr<rt::Bundle> owned;
  if (rt::Status s = rt::openBundle(argv[1], owned); s.failed())
    fail(s.message());
  std::shared_ptr<const rt::Bundle> bundle(std::move(owned));
  const rt::Manifest &m = bundle->getManifest();
  rt::Schedule schedule;
  if (rt::parseSchedule(m.schedule, schedule).failed() ||
      schedule.kind != rt::ScheduleKind::Learned)
    fail("not an LDP bundle (its schedule is '" + m.schedule + "')");
  if (m.gradSchedule != "static:16")
    fail("compile the bundle with --grad-bits=16 (its backward schedule is '" +
         m.gradSchedule + "')");
  // A two-layer perceptron: W1 [H, D], b1 [H], W2 [C, H], b2 [C], p0, p1.
  if (m.parameters.size() != 6 || m.sites.size() != 2 ||
      m.parameters[0].shape.size() != 2 || m.parameters[2].shape.size() != 2)
    fail("expected the two-layer perceptron of examples/models/mlp.mlir");
  const int64_t B = m.batch, H = m.parameters[0].shape[0],
                D = m.parameters[0].shape[1], C = m.parameters[2].shape[0];
  if (m.parameters[2].shape[1] != H || m.input.numel != B * D)
    fail("unexpected shapes");
  size_t pIndex[2] = {size_t(m.sites[0].precisionParameter),
                      size_t(m.sites[1].precisionParameter)};

  const float lambda = 2.0f;
  rt::TrainerOptions options;
  options.totalSteps = 1;
  options.seed = 7;
  options.learningRate = 1.0f;
  options.momentum = 0.0f;
  // Weight decay must not reach the precisions: with it, p - p' would be
  // off by 0.5 p.
  options.weightDecay = 0.5f;
  options.ldpLambda = lambda;
  std::unique_ptr<rt::Trainer> trainer;
  if (rt::Status s = rt::Trainer::create(bundle, options, trainer); s.failed())
    fail(s.message());

  // p_l so that b_l = (max - min) p + min is an integer: 5 and 4 bits.
  const float p[2] = {0.4f, 0.2f};
  std::vector<std::vector<float>> buffers;
  for (size_t i = 0; i < trainer->getNumBuffers(); ++i) {
    const float *data = trainer->getBuffer(i);
    buffers.emplace_back(data, data + trainer->getBufferSize(i));
  }
  buffers[pIndex[0]][0] = p[0];
  buffers[pIndex[1]][0] = p[1];
  std::vector<const float *> pointers;
  for (const std::vector<float> &b : buffers)
    pointers.push_back(b.data());
  if (rt::Status s = trainer->restore(pointers, 0, 0.0); s.failed())
    fail(s.message());

  std::mt19937 gen(3);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int> label(0, int(C) - 1);
  std::vector<float> x(size_t(B * D));
  for (float &v : x)
    v = (pixel(gen) - 0.286f) / 0.353f;
  std::vector<int64_t> labels(static_cast<size_t>(B));
  for (int64_t &l : labels)
    l = label(gen);

  float loss = 0;
  if (rt::Status s = trainer->step(x.data(), labels.data(), loss); s.failed())
    fail(s.message());
  int bits[2];
  for (int l = 0; l < 2; ++l)
    bits[l] = rt::ldpBits(p[l], schedule.minBits, schedule.maxBits);
  if (trainer->getLastSiteBits() != std::vector<int>{bits[0], bits[1]})
    fail("the runtime selected other bits than ldpBits(p)");
  double compiled[2];
  for (int l = 0; l < 2; ++l)
    compiled[l] =
        double(p[l]) - double(trainer->getParameterData(pIndex[l])[0]);

  // The reference, frozen at the step's point.
  std::vector<float> w1(buffers[0]), b1(buffers[1]), w2(buffers[2]),
      b2(buffers[3]);
  Frozen fx = freeze(x, 1, bits[0]);
  Frozen fw1 = freeze(w1, H, bits[0]);
  Frozen fw2 = freeze(w2, C, bits[1]);
  // The second layer's input at the step's point, for its frozen grid.
  std::vector<double> xq0 = fx.at(bits[0]), w1q0 = fw1.at(bits[0]);
  std::vector<float> a0(size_t(B * H));
  for (int64_t n = 0; n < B; ++n)
    for (int64_t h = 0; h < H; ++h) {
      // f32 like the compiled step, so that the frozen grid is its grid.
      float acc = b1[size_t(h)];
      double sum = 0;
      for (int64_t d = 0; d < D; ++d)
        sum += xq0[size_t(n * D + d)] * w1q0[size_t(h * D + d)];
      acc = float(double(acc) + sum);
      a0[size_t(n * H + h)] = std::fmax(acc, 0.0f);
    }
  Frozen fa = freeze(a0, 1, bits[1]);
  double macs0 = double(m.sites[0].macs), macs1 = double(m.sites[1].macs);
  double span = double(schedule.maxBits - schedule.minBits);

  auto lossAt = [&](double q0, double q1) {
    double c0 = span * q0 + schedule.minBits, c1 = span * q1 + schedule.minBits;
    std::vector<double> xq = fx.at(c0), w1q = fw1.at(c0), w2q = fw2.at(c1);
    // The second input: relu of the first layer, plus its frozen rounding.
    std::vector<double> a(size_t(B * H));
    for (int64_t n = 0; n < B; ++n)
      for (int64_t h = 0; h < H; ++h) {
        double sum = b1[size_t(h)];
        for (int64_t d = 0; d < D; ++d)
          sum += xq[size_t(n * D + d)] * w1q[size_t(h * D + d)];
        a[size_t(n * H + h)] = std::fmax(sum, 0.0);
      }
    double sa = fa.range[0] / (std::exp2(c1) - 1.0);
    double total = 0;
    for (int64_t n = 0; n < B; ++n) {
      std::vector<double> z(static_cast<size_t>(C));
      double mx = -INFINITY;
      for (int64_t c = 0; c < C; ++c) {
        double sum = b2[size_t(c)];
        for (int64_t h = 0; h < H; ++h)
          sum += (a[size_t(n * H + h)] + sa * fa.r[size_t(n * H + h)]) *
                 w2q[size_t(c * H + h)];
        z[size_t(c)] = sum;
        mx = std::fmax(mx, sum);
      }
      double e = 0;
      for (double v : z)
        e += std::exp(v - mx);
      total += std::log(e) + mx - z[size_t(labels[size_t(n)])];
    }
    double cost =
        (macs0 * c0 * c0 + macs1 * c1 * c1) / ((macs0 + macs1) * 1024.0);
    return total / double(B) + double(lambda) * cost;
  };

  double nominal = lossAt(p[0], p[1]);
  int status = 0;
  std::printf("loss: compiled %.7g, reference %.7g\n", double(loss), nominal);
  if (std::fabs(nominal - double(loss)) > 1e-4 * std::fmax(1.0, nominal)) {
    std::printf("FAIL: the reference loss differs from the step's\n");
    status = 1;
  }
  const double eps = 1e-3;
  for (int l = 0; l < 2; ++l) {
    double up[2] = {p[0], p[1]}, down[2] = {p[0], p[1]};
    up[l] += eps;
    down[l] -= eps;
    double fd = (lossAt(up[0], up[1]) - lossAt(down[0], down[1])) / (2 * eps);
    double rel = std::fabs(fd - compiled[l]) / std::fmax(std::fabs(fd), 1e-6);
    std::printf("site%d (%d bits): dL/dp compiled %.7g, finite differences "
                "%.7g, relative difference %.2e\n",
                l, bits[l], compiled[l], fd, rel);
    if (!(rel <= tolerance)) {
      std::printf("FAIL: site%d exceeds the tolerance %g\n", l, tolerance);
      status = 1;
    }
  }
  // The compiled qtrain.learned_bits and the runtime's ldpBits must agree
  // on every p, or the step would quantize at other bits than the variant
  // the runtime selected. The step's bits show in its loss: with a large
  // lambda the cost term dominates, so loss - loss(b0 = 5) gives b0^2 - 25
  // (the cross-entropy moves by far less than one bit's worth).
  const float bigLambda = 1e4f;
  double weight0 = double(bigLambda) * macs0 / ((macs0 + macs1) * 1024.0);
  auto stepLoss = [&](float p0) {
    rt::TrainerOptions o = options;
    o.ldpLambda = bigLambda;
    std::unique_ptr<rt::Trainer> t;
    if (rt::Status s = rt::Trainer::create(bundle, o, t); s.failed())
      fail(s.message());
    std::vector<std::vector<float>> b = buffers;
    b[pIndex[0]][0] = p0;
    b[pIndex[1]][0] = 0.0f;
    for (size_t k = 0; k < m.state.size(); ++k)
      if (m.state[k].kind == "ldp_lambda")
        b[2 * m.parameters.size() + k][0] = bigLambda;
    std::vector<const float *> ptrs;
    for (const std::vector<float> &v : b)
      ptrs.push_back(v.data());
    float l = 0;
    if (t->restore(ptrs, 0, 0.0).failed())
      fail("restoring p0 = " + std::to_string(p0) + " failed");
    // A p0 that is not finite gives an update that is not finite, which
    // the Trainer refuses to apply; the step ran and its loss is set.
    rt::Status s = t->step(x.data(), labels.data(), l);
    if (s.failed() && (std::isfinite(p0) ||
                       s.message().find("not finite") == std::string::npos))
      fail("a step at p0 = " + std::to_string(p0) + " failed: " + s.message());
    return double(l);
  };
  double base = stepLoss(0.4f);
  int agree = 0;
  const float tricky[] = {
      0.0f,      0.1f,     0.25f,         0.3f,        0.5f,       0.7f,
      0.75f,     0.9f,     1.0f,          -0.2f,       1.2f,       1e30f,
      -INFINITY, INFINITY, std::nanf(""), 0.29999998f, 0.70000005f};
  for (float p0 : tricky) {
    int runtime = rt::ldpBits(p0, schedule.minBits, schedule.maxBits);
    double square = 25.0 + (stepLoss(p0) - base) / weight0;
    int compiled = int(std::lround(std::sqrt(std::fmax(square, 0.0))));
    if (compiled == runtime) {
      ++agree;
    } else {
      std::printf("FAIL: p = %.9g: the step computed %d bits, ldpBits %d\n",
                  double(p0), compiled, runtime);
      status = 1;
    }
  }
  std::printf("learned bits: the compiled step and ldpBits agree on %d of "
              "%zu values of p\n",
              agree, sizeof(tricky) / sizeof(tricky[0]));
  if (status == 0)
    std::printf("OK\n");
  return status;
}
