//===- Schedule.cpp - Precision schedules and their string form ----------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Schedule.h"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

using namespace qtrain::rt;

//===----------------------------------------------------------------------===//
// Construction and verification
//===----------------------------------------------------------------------===//

Schedule Schedule::staticBits(int bits) {
  Schedule s;
  s.kind = ScheduleKind::Static;
  s.bits = bits;
  return s;
}

Schedule Schedule::cpt(int minBits, int maxBits, int cycles) {
  return cyclic(CycleShape::Cosine, minBits, maxBits, CycleMode::Repeated,
                CycleFlip::None, cycles, PeriodConvention::Floor);
}

Schedule Schedule::cyclic(CycleShape shape, int minBits, int maxBits,
                          CycleMode mode, CycleFlip flip, int cycles,
                          PeriodConvention period) {
  Schedule s;
  s.kind = ScheduleKind::Cyclic;
  s.minBits = minBits;
  s.maxBits = maxBits;
  s.shape = shape;
  s.mode = mode;
  s.flip = flip;
  s.cycles = cycles;
  s.period = period;
  return s;
}

Schedule Schedule::learned(int minBits, int maxBits) {
  Schedule s;
  s.kind = ScheduleKind::Learned;
  s.minBits = minBits;
  s.maxBits = maxBits;
  return s;
}

bool Schedule::operator==(const Schedule &other) const {
  return kind == other.kind && bits == other.bits && minBits == other.minBits &&
         maxBits == other.maxBits && shape == other.shape &&
         mode == other.mode && flip == other.flip && cycles == other.cycles &&
         period == other.period;
}

namespace {
/// Whether a cyclic schedule with this shape and mode needs a flip.
bool needsFlip(CycleShape shape, CycleMode mode) {
  return mode == CycleMode::Triangular &&
         (shape == CycleShape::Exponential || shape == CycleShape::Rex);
}

Status verifyBounds(int minBits, int maxBits) {
  if (minBits < 1 || minBits > kMaxScheduleBits)
    return Status::error("min bits " + std::to_string(minBits) +
                         " out of range [1, 16]");
  if (maxBits < 1 || maxBits > kMaxScheduleBits)
    return Status::error("max bits " + std::to_string(maxBits) +
                         " out of range [1, 16]");
  if (minBits > maxBits)
    return Status::error("min bits " + std::to_string(minBits) +
                         " is greater than max bits " +
                         std::to_string(maxBits));
  return Status::success();
}
} // namespace

Status qtrain::rt::verifySchedule(const Schedule &schedule) {
  switch (schedule.kind) {
  case ScheduleKind::Static:
    if (schedule.bits < 0 || schedule.bits > kMaxScheduleBits)
      return Status::error("static bits " + std::to_string(schedule.bits) +
                           " out of range [0, 16]");
    return Status::success();
  case ScheduleKind::Learned:
    return verifyBounds(schedule.minBits, schedule.maxBits);
  case ScheduleKind::Cyclic:
    break;
  }
  Status bounds = verifyBounds(schedule.minBits, schedule.maxBits);
  if (bounds.failed())
    return bounds;
  if (schedule.cycles < 1)
    return Status::error("cycles must be at least 1, got " +
                         std::to_string(schedule.cycles));
  bool flipped = schedule.flip != CycleFlip::None;
  if (needsFlip(schedule.shape, schedule.mode) && !flipped)
    return Status::error("a triangular " +
                         std::string(toString(schedule.shape)) +
                         " schedule needs flip=vertical or flip=horizontal");
  if (!needsFlip(schedule.shape, schedule.mode) && flipped)
    return Status::error(
        "flip only applies to triangular exponential or rex schedules");
  return Status::success();
}

Status qtrain::rt::verifySchedule(const Schedule &schedule,
                                  int64_t totalSteps) {
  Status status = verifySchedule(schedule);
  if (status.failed())
    return status;
  if (totalSteps < 1)
    return Status::error("total steps must be at least 1, got " +
                         std::to_string(totalSteps));
  if (schedule.kind == ScheduleKind::Cyclic && totalSteps < schedule.cycles)
    return Status::error("total steps " + std::to_string(totalSteps) +
                         " is less than the number of cycles " +
                         std::to_string(schedule.cycles) +
                         " (a period must be at least one step)");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

int64_t qtrain::rt::schedulePeriod(const Schedule &schedule,
                                   int64_t totalSteps) {
  if (schedule.kind != ScheduleKind::Cyclic ||
      verifySchedule(schedule, totalSteps).failed())
    return 0;
  int64_t period = totalSteps / schedule.cycles;
  if (schedule.period == PeriodConvention::FloorPlusOne)
    ++period;
  return period;
}

namespace {
/// pi as a double (the same value as numpy's np.pi).
constexpr double kPi = 3.141592653589793;

/// REX's g(w) exactly as Better Schedules' code writes it.
double rexCurve(double w) { return w / ((1.0 - 0.9) + 0.9 * w); }

double growthValue(CycleShape shape, double lo, double hi, double delta,
                   double z, double u) {
  switch (shape) {
  case CycleShape::Cosine:
    return lo + 0.5 * delta * (1.0 - std::cos(kPi * z));
  case CycleShape::Linear:
    return lo + delta * z;
  case CycleShape::Exponential:
    return hi - delta * std::exp(-4.0 * z);
  case CycleShape::Rex:
    return hi - delta * rexCurve(u);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double decayValue(CycleShape shape, CycleFlip flip, double lo, double hi,
                  double delta, double z, double u) {
  switch (shape) {
  case CycleShape::Cosine:
    return hi - 0.5 * delta * (1.0 - std::cos(kPi * z));
  case CycleShape::Linear:
    return hi - delta * z;
  case CycleShape::Exponential:
    if (flip == CycleFlip::Horizontal)
      return hi - delta * std::exp(-4.0 * u);
    return lo + delta * std::exp(-4.0 * z);
  case CycleShape::Rex:
    if (flip == CycleFlip::Horizontal)
      return hi - delta * rexCurve(z);
    return lo + delta * rexCurve(u);
  }
  return std::numeric_limits<double>::quiet_NaN();
}
} // namespace

double qtrain::rt::scheduleValue(const Schedule &schedule, int64_t step,
                                 int64_t totalSteps) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (step < 0 || verifySchedule(schedule, totalSteps).failed())
    return kNaN;
  switch (schedule.kind) {
  case ScheduleKind::Static:
    return schedule.bits;
  case ScheduleKind::Learned:
    return ldpBits(0.0f, schedule.minBits, schedule.maxBits);
  case ScheduleKind::Cyclic:
    break;
  }
  int64_t period = schedulePeriod(schedule, totalSteps);
  int64_t r = step % period;
  double z = double(r) / double(period);
  double u = double(period - r) / double(period);
  double lo = schedule.minBits, hi = schedule.maxBits;
  double delta = double(schedule.maxBits - schedule.minBits);
  bool decay =
      schedule.mode == CycleMode::Triangular && (step / period) % 2 == 0;
  if (decay)
    return decayValue(schedule.shape, schedule.flip, lo, hi, delta, z, u);
  return growthValue(schedule.shape, lo, hi, delta, z, u);
}

int qtrain::rt::scheduleBits(const Schedule &schedule, int64_t step,
                             int64_t totalSteps) {
  double value = scheduleValue(schedule, step, totalSteps);
  if (std::isnan(value))
    return -1;
  // Half to even, independent of the floating-point environment.
  double lower = std::floor(value);
  double frac = value - lower;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(lower, 2.0) != 0.0))
    lower += 1.0;
  return int(lower);
}

int qtrain::rt::scheduleMaxBits(const Schedule &schedule) {
  return schedule.kind == ScheduleKind::Static ? schedule.bits
                                               : schedule.maxBits;
}

int qtrain::rt::ldpBits(float p, int minBits, int maxBits) {
  if (verifyBounds(minBits, maxBits).failed())
    return -1;
  if (std::isnan(p))
    return minBits;
  float scaled = p * float(maxBits - minBits);
  float value = scaled + float(minBits);
  if (!(value > float(minBits)))
    return minBits;
  if (!(value < float(maxBits)))
    return maxBits;
  // value is now in (minBits, maxBits), so the conversion is exact.
  float lower = std::floor(value);
  float frac = value - lower;
  int bits = int(lower);
  if (frac > 0.5f || (frac == 0.5f && bits % 2 != 0))
    ++bits;
  return bits;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

std::string_view qtrain::rt::toString(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::Static:
    return "static";
  case ScheduleKind::Cyclic:
    return "cyclic";
  case ScheduleKind::Learned:
    return "ldp";
  }
  return "?";
}

std::string_view qtrain::rt::toString(CycleShape shape) {
  switch (shape) {
  case CycleShape::Cosine:
    return "cosine";
  case CycleShape::Linear:
    return "linear";
  case CycleShape::Exponential:
    return "exponential";
  case CycleShape::Rex:
    return "rex";
  }
  return "?";
}

std::string_view qtrain::rt::toString(CycleMode mode) {
  switch (mode) {
  case CycleMode::Repeated:
    return "repeated";
  case CycleMode::Triangular:
    return "triangular";
  }
  return "?";
}

std::string_view qtrain::rt::toString(CycleFlip flip) {
  switch (flip) {
  case CycleFlip::None:
    return "none";
  case CycleFlip::Vertical:
    return "vertical";
  case CycleFlip::Horizontal:
    return "horizontal";
  }
  return "?";
}

std::string_view qtrain::rt::toString(PeriodConvention period) {
  switch (period) {
  case PeriodConvention::Floor:
    return "floor";
  case PeriodConvention::FloorPlusOne:
    return "floor_plus_one";
  }
  return "?";
}

namespace {
/// The ten named schedules of PAPERS.md §2.
struct NamedSchedule {
  std::string_view name;
  CycleShape shape;
  CycleMode mode;
  CycleFlip flip;
};

constexpr NamedSchedule kNamedSchedules[] = {
    {"cosine-repeated", CycleShape::Cosine, CycleMode::Repeated,
     CycleFlip::None},
    {"cosine-triangular", CycleShape::Cosine, CycleMode::Triangular,
     CycleFlip::None},
    {"linear-repeated", CycleShape::Linear, CycleMode::Repeated,
     CycleFlip::None},
    {"linear-triangular", CycleShape::Linear, CycleMode::Triangular,
     CycleFlip::None},
    {"exp-repeated", CycleShape::Exponential, CycleMode::Repeated,
     CycleFlip::None},
    {"exp-triangular-vertical", CycleShape::Exponential, CycleMode::Triangular,
     CycleFlip::Vertical},
    {"exp-triangular-horizontal", CycleShape::Exponential,
     CycleMode::Triangular, CycleFlip::Horizontal},
    {"rex-repeated", CycleShape::Rex, CycleMode::Repeated, CycleFlip::None},
    {"rex-triangular-vertical", CycleShape::Rex, CycleMode::Triangular,
     CycleFlip::Vertical},
    {"rex-triangular-horizontal", CycleShape::Rex, CycleMode::Triangular,
     CycleFlip::Horizontal},
};

const NamedSchedule *findNamed(std::string_view name) {
  for (const NamedSchedule &named : kNamedSchedules)
    if (named.name == name)
      return &named;
  return nullptr;
}

std::string bounds(const Schedule &schedule) {
  return std::to_string(schedule.minBits) + ":" +
         std::to_string(schedule.maxBits);
}
} // namespace

std::string qtrain::rt::printSchedule(const Schedule &schedule) {
  switch (schedule.kind) {
  case ScheduleKind::Static:
    if (schedule.bits == 0)
      return "fp32";
    return "static:" + std::to_string(schedule.bits);
  case ScheduleKind::Learned:
    return "ldp:" + bounds(schedule);
  case ScheduleKind::Cyclic:
    break;
  }
  std::string cycles = ":cycles=" + std::to_string(schedule.cycles);
  if (schedule.shape == CycleShape::Cosine &&
      schedule.mode == CycleMode::Repeated &&
      schedule.flip == CycleFlip::None &&
      schedule.period == PeriodConvention::Floor)
    return "cpt:" + bounds(schedule) +
           (schedule.cycles == kCptDefaultCycles ? "" : cycles);
  if (schedule.period == PeriodConvention::FloorPlusOne) {
    for (const NamedSchedule &named : kNamedSchedules)
      if (named.shape == schedule.shape && named.mode == schedule.mode &&
          named.flip == schedule.flip)
        return std::string(named.name) + ":" + bounds(schedule) +
               (schedule.cycles == kCyclicDefaultCycles ? "" : cycles);
  }
  std::string text = "cyclic:" + std::string(toString(schedule.shape)) + ":" +
                     bounds(schedule);
  if (schedule.mode != CycleMode::Repeated)
    text += ":mode=" + std::string(toString(schedule.mode));
  if (schedule.flip != CycleFlip::None)
    text += ":flip=" + std::string(toString(schedule.flip));
  if (schedule.cycles != kCyclicDefaultCycles)
    text += cycles;
  if (schedule.period != PeriodConvention::FloorPlusOne)
    text += ":period=" + std::string(toString(schedule.period));
  return text;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
/// A ':'-separated piece of the input and its 0-based offset.
struct Token {
  std::string_view text;
  size_t offset;
};

/// Quotes `text` for a message: control and non-ASCII bytes as \xNN, and
/// the middle of long texts elided.
std::string quote(std::string_view text, size_t maxLength = 48) {
  std::string shown;
  if (text.size() > maxLength)
    shown = std::string(text.substr(0, maxLength / 2)) + "..." +
            std::string(text.substr(text.size() - maxLength / 2));
  else
    shown = std::string(text);
  std::string out = "'";
  for (unsigned char c : shown) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
      continue;
    }
    const char *digits = "0123456789abcdef";
    out += "\\x";
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out + "'";
}

class ScheduleParser {
public:
  explicit ScheduleParser(std::string_view text) : text(text) {
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
      if (i == text.size() || text[i] == ':') {
        tokens.push_back({text.substr(start, i - start), start});
        start = i + 1;
      }
    }
  }

  Status parse(Schedule &out);

private:
  Status error(size_t offset, const std::string &what) const {
    return Status::error("invalid schedule " + quote(text, 80) + " at column " +
                         std::to_string(offset + 1) + ": " + what);
  }
  Status error(const Token &token, const std::string &what) const {
    return error(token.offset, what);
  }

  /// Whether another token follows; `next` is the index of the next one.
  bool atEnd() const { return next >= tokens.size(); }
  /// The offset just past the last token consumed (for "missing" errors).
  size_t endOffset() const {
    const Token &last = tokens[next - 1];
    return last.offset + last.text.size();
  }

  /// Parses a decimal integer token (digits only, at most 9).
  Status parseInteger(const Token &token, const std::string &what,
                      int &value) const;
  /// Consumes the next token as bits in [lo, 16], named `what`.
  Status parseBits(const std::string &what, int lo, int &value, Token &token);
  /// Consumes MIN ':' MAX.
  Status parseBounds(int &minBits, int &maxBits);
  /// Consumes the trailing options: all four if `allowAll`, else only
  /// cycles=. Records a flip= option in `flipOption`.
  Status parseOptions(Schedule &schedule, bool allowAll);

  /// The first token: the schedule's name.
  std::string_view headName() const { return tokens.front().text; }

  std::string_view text;
  std::vector<Token> tokens;
  size_t next = 0;
  std::optional<Token> flipOption;
};

Status ScheduleParser::parseInteger(const Token &token, const std::string &what,
                                    int &value) const {
  if (token.text.empty())
    return error(token, "missing " + what);
  for (char c : token.text)
    if (c < '0' || c > '9')
      return error(token, "expected a non-negative integer for " + what +
                              ", got " + quote(token.text));
  // Skip leading zeros so that "0008" is fine; 9 digits cannot overflow.
  std::string_view digits = token.text;
  while (digits.size() > 1 && digits.front() == '0')
    digits.remove_prefix(1);
  if (digits.size() > 9)
    return error(token, what + " " + quote(token.text) + " is too large");
  int result = 0;
  for (char c : digits)
    result = result * 10 + (c - '0');
  value = result;
  return Status::success();
}

Status ScheduleParser::parseBits(const std::string &what, int lo, int &value,
                                 Token &token) {
  if (atEnd())
    return error(endOffset(), "missing " + what);
  token = tokens[next++];
  Status status = parseInteger(token, what, value);
  if (status.failed())
    return status;
  if (value < lo || value > kMaxScheduleBits)
    return error(token, what + " " + quote(token.text) + " out of range [" +
                            std::to_string(lo) + ", 16]");
  return Status::success();
}

Status ScheduleParser::parseBounds(int &minBits, int &maxBits) {
  Token minToken, maxToken;
  Status status = parseBits("min bits", 1, minBits, minToken);
  if (status.failed())
    return status;
  status = parseBits("max bits", 1, maxBits, maxToken);
  if (status.failed())
    return status;
  if (minBits > maxBits)
    return error(minToken, "min bits " + quote(minToken.text) +
                               " is greater than max bits " +
                               quote(maxToken.text));
  return Status::success();
}

Status ScheduleParser::parseOptions(Schedule &schedule, bool allowAll) {
  bool sawCycles = false, sawPeriod = false, sawFlip = false, sawMode = false;
  const std::string expected =
      allowAll ? "mode=, flip=, cycles= or period=" : "cycles=";
  while (!atEnd()) {
    Token token = tokens[next++];
    size_t eq = token.text.find('=');
    if (token.text.empty())
      return error(token, "empty option (expected " + expected + ")");
    if (eq == std::string_view::npos)
      return error(token, "unexpected " + quote(token.text) +
                              " (expected an option: " + expected + ")");
    std::string_view key = token.text.substr(0, eq);
    Token value{token.text.substr(eq + 1), token.offset + eq + 1};
    bool known =
        key == "cycles" || key == "mode" || key == "flip" || key == "period";
    if (!known || (!allowAll && key != "cycles"))
      return error(token,
                   std::string(known ? "option " : "unknown option ") +
                       quote(std::string(key) + "=") +
                       (known ? " is not accepted by " +
                                    std::string(headName()) + " schedules"
                              : std::string()) +
                       " (expected " + expected + ")");
    bool &seen = key == "cycles" ? sawCycles
                 : key == "mode" ? sawMode
                 : key == "flip" ? sawFlip
                                 : sawPeriod;
    if (seen)
      return error(token, "duplicate option " + quote(std::string(key) + "="));
    seen = true;
    if (key == "cycles") {
      Status status = parseInteger(value, "cycles", schedule.cycles);
      if (status.failed())
        return status;
      if (schedule.cycles < 1)
        return error(value,
                     "cycles must be at least 1, got " + quote(value.text));
      continue;
    }
    if (key == "mode") {
      if (value.text == "repeated")
        schedule.mode = CycleMode::Repeated;
      else if (value.text == "triangular")
        schedule.mode = CycleMode::Triangular;
      else
        return error(value, "invalid mode " + quote(value.text) +
                                " (expected repeated or triangular)");
      continue;
    }
    if (key == "flip") {
      flipOption = token;
      if (value.text == "vertical")
        schedule.flip = CycleFlip::Vertical;
      else if (value.text == "horizontal")
        schedule.flip = CycleFlip::Horizontal;
      else
        return error(value, "invalid flip " + quote(value.text) +
                                " (expected vertical or horizontal)");
      continue;
    }
    if (value.text == "floor")
      schedule.period = PeriodConvention::Floor;
    else if (value.text == "floor_plus_one")
      schedule.period = PeriodConvention::FloorPlusOne;
    else
      return error(value, "invalid period " + quote(value.text) +
                              " (expected floor or floor_plus_one)");
  }
  return Status::success();
}

Status ScheduleParser::parse(Schedule &out) {
  if (text.empty())
    return error(0, "empty schedule string");
  const Token head = tokens[next++];
  std::string_view name = head.text;
  Schedule schedule;
  Status status = Status::success();

  if (name == "fp32") {
    schedule = Schedule::fp32();
  } else if (name == "static") {
    int bits = 0;
    Token bitsToken;
    status = parseBits("static bits", 0, bits, bitsToken);
    schedule = Schedule::staticBits(bits);
  } else if (name == "ldp") {
    int minBits = kLdpDefaultMinBits, maxBits = kLdpDefaultMaxBits;
    if (!atEnd())
      status = parseBounds(minBits, maxBits);
    schedule = Schedule::learned(minBits, maxBits);
  } else if (name == "cpt") {
    if (!atEnd() && tokens[next].text == "cosine")
      ++next;
    else if (!atEnd() &&
             (tokens[next].text == "linear" ||
              tokens[next].text == "exponential" ||
              tokens[next].text == "exp" || tokens[next].text == "rex"))
      return error(tokens[next],
                   "cpt schedules are cosine, got shape " +
                       quote(tokens[next].text) +
                       " (use cyclic:" + std::string(tokens[next].text) +
                       ":MIN:MAX:period=floor)");
    int minBits = 0, maxBits = 0;
    status = parseBounds(minBits, maxBits);
    schedule = Schedule::cpt(minBits, maxBits);
    if (status.isOk())
      status = parseOptions(schedule, /*allowAll=*/false);
  } else if (const NamedSchedule *named = findNamed(name)) {
    int minBits = 0, maxBits = 0;
    status = parseBounds(minBits, maxBits);
    schedule = Schedule::cyclic(named->shape, minBits, maxBits, named->mode,
                                named->flip);
    if (status.isOk())
      status = parseOptions(schedule, /*allowAll=*/false);
  } else if (name == "cyclic") {
    if (atEnd())
      return error(endOffset(), "missing shape (expected cosine, linear, "
                                "exponential or rex)");
    Token shapeToken = tokens[next++];
    CycleShape shape;
    if (shapeToken.text == "cosine")
      shape = CycleShape::Cosine;
    else if (shapeToken.text == "linear")
      shape = CycleShape::Linear;
    else if (shapeToken.text == "exponential" || shapeToken.text == "exp")
      shape = CycleShape::Exponential;
    else if (shapeToken.text == "rex")
      shape = CycleShape::Rex;
    else
      return error(shapeToken,
                   (shapeToken.text.empty()
                        ? std::string("missing shape")
                        : "unknown shape " + quote(shapeToken.text)) +
                       " (expected cosine, linear, exponential or rex)");
    int minBits = 0, maxBits = 0;
    status = parseBounds(minBits, maxBits);
    schedule = Schedule::cyclic(shape, minBits, maxBits);
    if (status.isOk())
      status = parseOptions(schedule, /*allowAll=*/true);
    if (status.isOk()) {
      bool wantsFlip = needsFlip(shape, schedule.mode);
      if (flipOption && !wantsFlip)
        status = error(*flipOption, "option " + quote(flipOption->text) +
                                        " only applies to triangular "
                                        "exponential or rex schedules");
      else if (wantsFlip && !flipOption)
        schedule.flip = CycleFlip::Vertical;
    }
  } else {
    return error(head, (name.empty() ? std::string("missing schedule name")
                                     : "unknown schedule " + quote(name)) +
                           " (expected fp32, static, cpt, cyclic, ldp or a "
                           "named schedule such as cosine-repeated)");
  }
  if (status.failed())
    return status;
  if (!atEnd()) {
    const Token &extra = tokens[next];
    return error(extra, "unexpected " + quote(extra.text) + " after " +
                            quote(text.substr(0, extra.offset - 1)));
  }
  out = schedule;
  return Status::success();
}
} // namespace

Status qtrain::rt::parseSchedule(std::string_view text, Schedule &out) {
  return ScheduleParser(text).parse(out);
}

Status qtrain::rt::parseBitList(std::string_view text, std::vector<int> &out) {
  auto parseOne = [](std::string_view token, int &value) {
    if (token.empty() || token.size() > 2)
      return false;
    value = 0;
    for (char c : token) {
      if (c < '0' || c > '9')
        return false;
      value = value * 10 + (c - '0');
    }
    return value >= 1 && value <= kMaxScheduleBits;
  };
  auto bad = [&](std::string_view token) {
    return Status::error("invalid bit list '" + std::string(text) + "': '" +
                         std::string(token) +
                         "' is not a bitwidth in [1, 16] (write MIN:MAX or "
                         "B,B,...)");
  };
  std::vector<int> bits;
  if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    int lo = 0, hi = 0;
    std::string_view first = text.substr(0, colon),
                     second = text.substr(colon + 1);
    if (!parseOne(first, lo))
      return bad(first);
    if (!parseOne(second, hi))
      return bad(second);
    if (lo > hi)
      return Status::error("invalid bit list '" + std::string(text) +
                           "': the range is empty (min > max)");
    for (int b = lo; b <= hi; ++b)
      bits.push_back(b);
  } else {
    size_t start = 0;
    while (true) {
      size_t comma = text.find(',', start);
      std::string_view token = text.substr(
          start, comma == std::string_view::npos ? std::string_view::npos
                                                 : comma - start);
      int b = 0;
      if (!parseOne(token, b))
        return bad(token);
      bool seen = false;
      for (int v : bits)
        seen |= v == b;
      if (!seen)
        bits.push_back(b);
      if (comma == std::string_view::npos)
        break;
      start = comma + 1;
    }
  }
  out = std::move(bits);
  return Status::success();
}
