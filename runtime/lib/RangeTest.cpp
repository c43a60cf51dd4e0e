//===- RangeTest.cpp - CPT's precision range test -------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/RangeTest.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace qtrain::rt;

std::vector<int> qtrain::rt::rangeTestCandidates(const Manifest &manifest,
                                                 const Schedule &gradSchedule,
                                                 std::string_view gradText) {
  std::vector<int> candidates;
  for (int b = 1; b <= 16; ++b)
    if (validateSchedule(manifest, Schedule::staticBits(b),
                         "static:" + std::to_string(b), gradSchedule, gradText)
            .isOk())
      candidates.push_back(b);
  return candidates;
}

RangeDecision qtrain::rt::decideRange(const std::vector<int> &candidates,
                                      const std::vector<RangePoint> &points,
                                      double threshold) {
  RangeDecision d;
  for (const RangePoint &p : points) {
    if (p.diverged())
      d.diverged.push_back(p.bits);
    else if (d.bmin < 0 && p.gain() > threshold)
      d.bmin = p.bits;
  }
  d.bmax =
      std::find(candidates.begin(), candidates.end(), 8) != candidates.end()
          ? 8
          : candidates.back();
  return d;
}

Status qtrain::rt::measureRange(Trainer &trainer, int bits,
                                const Dataset &train,
                                const RangeTestOptions &options,
                                RangePoint &point) {
  const Manifest &m = trainer.getBundle().getManifest();
  int64_t batch = m.batch;
  size_t numel = size_t(batch * options.input.sampleSize());
  bool isIds = options.input.isIds;
  std::vector<float> x(isIds ? 0 : numel), logits(size_t(batch * m.classes));
  std::vector<int64_t> ids(isIds ? numel : 0);
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  int64_t perEpoch = train.count / batch;
  std::vector<int64_t> order;
  int64_t correctFirst = 0, correctLast = 0;
  point = RangePoint();
  point.bits = bits;
  for (int64_t step = 0; step < options.steps; ++step) {
    int64_t epoch = step / perEpoch, pos = step % perEpoch;
    if (pos == 0)
      order = shuffleOrder(options.seed, epoch, train.count);
    if (isIds)
      fillIdBatch(train, order, pos, batch, ids.data(), labels.data());
    else
      fillBatch(train, order, pos, batch, step, options.input, x.data(),
                labels.data());
    bool first = step < options.window;
    bool last = step >= options.steps - options.window;
    if (first || last) {
      if (Status s = isIds ? trainer.eval(ids.data(), logits.data(), bits)
                           : trainer.eval(x.data(), logits.data(), bits);
          s.failed())
        return s;
      int64_t correct = 0;
      for (int64_t i = 0; i < batch; ++i) {
        const float *row = &logits[size_t(i * m.classes)];
        correct +=
            std::max_element(row, row + m.classes) - row == labels[size_t(i)];
      }
      (first ? correctFirst : correctLast) += correct;
    }
    float loss;
    ErrorKind kind = ErrorKind::None;
    Status s = isIds ? trainer.step(ids.data(), labels.data(), loss, &kind)
                     : trainer.step(x.data(), labels.data(), loss, &kind);
    if (s.failed() && kind != ErrorKind::Diverged)
      return s;
    if (s.failed() || !std::isfinite(loss)) {
      point.divergedAt = step;
      return Status::success();
    }
  }
  double n = double(options.window * batch);
  point.firstAccuracy = double(correctFirst) / n;
  point.lastAccuracy = double(correctLast) / n;
  return Status::success();
}

Status qtrain::rt::runRangeTest(std::shared_ptr<const Bundle> bundle,
                                const std::vector<int> &candidates,
                                TrainerOptions trainerOptions,
                                const Dataset &train,
                                const RangeTestOptions &options,
                                const RangeObserver &observer,
                                RangeDecision &decision) {
  std::vector<RangePoint> points;
  decision = decideRange(candidates, points, options.threshold);
  trainerOptions.totalSteps = options.steps;
  for (int b : candidates) {
    // A fresh trainer per precision: the same seed, the same initial
    // parameters, whatever the previous precision did.
    trainerOptions.schedule = "static:" + std::to_string(b);
    std::unique_ptr<Trainer> trainer;
    if (Status s = Trainer::create(bundle, trainerOptions, trainer); s.failed())
      return s;
    RangePoint point;
    if (Status s = measureRange(*trainer, b, train, options, point); s.failed())
      return s;
    points.push_back(point);
    decision = decideRange(candidates, points, options.threshold);
    if (observer)
      observer(point, decision);
  }
  return Status::success();
}
