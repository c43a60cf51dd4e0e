//===- Logs.cpp - qtrain-run's output folder and logs ---------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Logs.h"

#include "Fatal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtrain::run;
namespace rt = qtrain::rt;
using json = nlohmann::json;

bool qtrain::run::isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void qtrain::run::makeDirectories(const std::string &path) {
  std::string partial;
  std::stringstream parts(path);
  std::string part;
  if (!path.empty() && path[0] == '/')
    partial = "/";
  while (std::getline(parts, part, '/')) {
    if (part.empty())
      continue;
    partial += part;
    if (!isDirectory(partial)) {
      if (::mkdir(partial.c_str(), 0755) == 0)
        createdOutputs().directories.push_back(partial);
      else if (errno != EEXIST)
        die("cannot create directory " + partial + ": " + std::strerror(errno));
    }
    partial += "/";
  }
}

std::string qtrain::run::baseName(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string qtrain::run::makeOutputFolder(const Options &o,
                                          const std::string &scheduleText,
                                          const std::string &resumeDir) {
  std::string outDir = o.out;
  if (outDir.empty() && !o.resume.empty()) {
    // A resumed run continues in its checkpoint's folder.
    outDir = resumeDir;
  }
  if (outDir.empty()) {
    std::string name = scheduleText;
    std::replace(name.begin(), name.end(), ':', '-');
    outDir = "qtrain-runs/" + baseName(o.bundle) + "-" + name + "-seed" +
             std::to_string(o.seed);
  }
  makeDirectories(outDir);
  return outDir;
}

bool qtrain::run::checkOutputFolder(const Options &o, const std::string &outDir,
                                    const std::string &checkpointPath) {
  auto sameFile = [](const std::string &a, const std::string &b) {
    struct stat sa, sb;
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  };
  bool ownFolder = !o.resume.empty() && sameFile(o.resume, checkpointPath);
  if (!o.overwrite && !ownFolder)
    for (const char *name : {"checkpoint.qck", "steps.csv", "epochs.csv"})
      if (::access((outDir + "/" + name).c_str(), F_OK) == 0) {
        bool resumable = ::access(checkpointPath.c_str(), F_OK) == 0;
        die(outDir + " holds " +
            (o.resume.empty() ? "an earlier run" : "another run") + " (" +
            name + "); " +
            (resumable && o.resume.empty()
                 ? "continue it with --resume=" + checkpointPath + ", or "
                 : std::string()) +
            "pass --overwrite or another --out");
      }
  return ownFolder;
}

namespace {

constexpr const char *kStepsHeader =
    "step,epoch,loss,bits,grad_bits,bitops,cumulative_bitops,step_seconds,"
    "loss_scale,skipped,promoted,site_bits,ldp_lambda\n";
constexpr const char *kEpochsHeader =
    "epoch,step,train_loss,test_loss,test_accuracy,eval_bits,"
    "cumulative_bitops,seconds\n";

/// `value` as a log prints it with `format`.
std::string figure(const char *format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

/// A figure's value as the plots draw it.
double valueOf(const std::string &figure) { return std::atof(figure.c_str()); }

/// The plots' figures of steps.csv row `line`.
LoggedStep parseStepRow(const std::string &line) {
  LoggedStep s;
  s.complete = std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf", &s.step,
                           &s.epoch, &s.loss, &s.bits, &s.gradBits) == 5;
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');)
    fields.push_back(f);
  if (fields.size() < 13 || fields[11].empty())
    return s;
  s.step = valueOf(fields[0]);
  std::stringstream sites(fields[11]);
  for (std::string b; std::getline(sites, b, ';');)
    s.siteBits.push_back(valueOf(b));
  s.bitOps = valueOf(fields[5]);
  s.lambda = valueOf(fields[12]);
  return s;
}

} // namespace

Logs::~Logs() {
  for (std::FILE *f : {stepsCsv, stepsJson, epochsCsv, epochsJson})
    if (f)
      std::fclose(f);
}

std::string Logs::open(int64_t resumeStep, int64_t stepsPerEpoch,
                       const std::string &from) {
  int64_t resumeEpoch = resumeStep / stepsPerEpoch;
  int64_t steps = keep(from, "steps.csv", resumeStep, kStepsHeader);
  keep(from, "steps.jsonl", resumeStep, nullptr);
  int64_t epochs = keep(from, "epochs.csv", resumeEpoch, kEpochsHeader);
  keep(from, "epochs.jsonl", resumeEpoch, nullptr);
  std::string warning;
  if (steps < resumeStep || epochs < resumeEpoch)
    warning = from + " has " + std::to_string(steps) + " of the " +
              std::to_string(resumeStep) + " steps.csv rows and " +
              std::to_string(epochs) + " of the " +
              std::to_string(resumeEpoch) +
              " epochs.csv rows of the run before step " +
              std::to_string(resumeStep) + "; the logs in " + dir +
              " lack the others (the epoch figures do not depend on them: "
              "the checkpoint has what they need)";
  stepsCsv = append("steps.csv", kStepsHeader);
  stepsJson = append("steps.jsonl", "");
  epochsCsv = append("epochs.csv", kEpochsHeader);
  epochsJson = append("epochs.jsonl", "");
  return warning;
}

// The plots draw each figure as the CSV prints it, so that a resumed run,
// whose rows before the checkpoint are read back from its logs, draws
// what an unbroken run does.
void Logs::step(int64_t step, int64_t epoch, float loss, double bits,
                int gradBits, double bitOps, double total, double seconds,
                float lossScale, bool skipped,
                const std::vector<rt::Promotion> &promotions,
                const std::vector<int> &siteBits, float lambda) {
  std::string sites;
  for (size_t i = 0; i < siteBits.size(); ++i)
    sites += (i ? ";" : "") + std::to_string(siteBits[i]);
  std::string lossText = figure("%.9g", loss), bitsText = figure("%.6g", bits),
              bitOpsText = figure("%.6g", bitOps),
              lambdaText = figure("%.9g", lambda);
  std::fprintf(stepsCsv, "%lld,%lld,%s,%s,%d,%s,%.6g,%.6f,%.9g,%d,%zu,%s,%s\n",
               (long long)step, (long long)epoch, lossText.c_str(),
               bitsText.c_str(), gradBits, bitOpsText.c_str(), total, seconds,
               lossScale, skipped ? 1 : 0, promotions.size(), sites.c_str(),
               lambdaText.c_str());
  LoggedStep logged;
  logged.step = double(step);
  logged.epoch = double(epoch);
  logged.loss = valueOf(lossText);
  logged.bits = valueOf(bitsText);
  logged.gradBits = gradBits;
  logged.complete = true;
  logged.siteBits.assign(siteBits.begin(), siteBits.end());
  logged.bitOps = valueOf(bitOpsText);
  logged.lambda = valueOf(lambdaText);
  history.steps.push_back(std::move(logged));
  json promoted = json::array();
  for (const rt::Promotion &p : promotions)
    promoted.push_back(
        {{"tensor", p.name}, {"overflow_ratio", p.overflowRatio}});
  json j = {{"step", step},
            {"epoch", epoch},
            {"loss", loss},
            {"bits", bits},
            {"grad_bits", gradBits},
            {"bitops", bitOps},
            {"cumulative_bitops", total},
            {"step_seconds", seconds},
            {"loss_scale", lossScale},
            {"skipped", skipped},
            {"promoted", promoted}};
  if (!siteBits.empty()) {
    j["site_bits"] = siteBits;
    j["ldp_lambda"] = lambda;
  }
  std::fprintf(stepsJson, "%s\n", j.dump().c_str());
}

void Logs::epoch(int64_t epoch, int64_t step, double trainLoss, double testLoss,
                 double testAccuracy, int evalBits, double total,
                 double seconds) {
  std::string accuracyText = figure("%.6f", testAccuracy);
  std::fprintf(epochsCsv, "%lld,%lld,%.6f,%.6f,%s,%d,%.6g,%.3f\n",
               (long long)epoch, (long long)step, trainLoss, testLoss,
               accuracyText.c_str(), evalBits, total, seconds);
  history.epochs.push_back({double(epoch), valueOf(accuracyText)});
  json j = {{"epoch", epoch},
            {"step", step},
            {"train_loss", trainLoss},
            {"test_loss", testLoss},
            {"test_accuracy", testAccuracy},
            {"eval_bits", evalBits},
            {"cumulative_bitops", total},
            {"seconds", seconds}};
  std::fprintf(epochsJson, "%s\n", j.dump().c_str());
  flush();
}

void Logs::flush() {
  for (std::FILE *f : {stepsCsv, stepsJson, epochsCsv, epochsJson})
    if (std::fflush(f) != 0 || std::ferror(f))
      die("cannot write the logs in " + dir + ": " + std::strerror(errno));
}

void Logs::remember(const char *name, const std::string &line) {
  if (std::strcmp(name, "steps.csv") == 0) {
    history.steps.push_back(parseStepRow(line));
    return;
  }
  LoggedEpoch e;
  double step, trainLoss, testLoss;
  if (std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf", &e.epoch, &step,
                  &trainLoss, &testLoss, &e.accuracy) == 5)
    history.epochs.push_back(e);
}

int64_t Logs::keep(const std::string &from, const char *name, int64_t limit,
                   const char *header) {
  bool csv = header != nullptr;
  std::ifstream in(from + "/" + name);
  if (!in) {
    // Not even the old rows of this folder (--overwrite) stay.
    std::remove(path(name).c_str());
    return 0;
  }
  std::string line, kept = csv ? header : "";
  bool first = true;
  int64_t rows = 0;
  while (std::getline(in, line)) {
    if (csv && first) {
      first = false;
      continue;
    }
    first = false;
    long long key = -1;
    if (csv)
      key = std::strtoll(line.c_str(), nullptr, 10);
    else {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object()) {
        auto it =
            j.find(std::string(name).find("epoch") == 0 ? "epoch" : "step");
        if (it != j.end() && it->is_number_integer())
          key = it->get<long long>();
      }
    }
    if (key >= 0 && key < limit) {
      kept += line + "\n";
      ++rows;
      if (csv)
        remember(name, line);
    }
  }
  in.close();
  // Into a new file renamed over the old one, so that a run killed here
  // still has every row (the kill test of test/tools/faults.test).
  std::string tmp = path(name) + ".tmp";
  // Rows copied from another folder (a resume into another --out) make a
  // file this run created.
  bool created = ::access(path(name).c_str(), F_OK) != 0;
  errno = 0;
  std::FILE *f = std::fopen(tmp.c_str(), "w");
  bool written = f &&
                 std::fwrite(kept.data(), 1, kept.size(), f) == kept.size() &&
                 std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  int error = errno ? errno : EIO;
  if (f && std::fclose(f) != 0 && written) {
    written = false;
    error = errno ? errno : EIO;
  }
  if (!written || std::rename(tmp.c_str(), path(name).c_str()) != 0) {
    if (written)
      error = errno;
    std::remove(tmp.c_str());
    die("cannot rewrite " + path(name) + ": " + std::strerror(error));
  }
  if (created)
    createdOutputs().files.push_back(path(name));
  return rows;
}

std::FILE *Logs::append(const char *name, const char *header) {
  std::string p = path(name);
  bool fresh = ::access(p.c_str(), F_OK) != 0;
  std::FILE *f = std::fopen(p.c_str(), "a");
  if (!f)
    die("cannot write " + p + ": " + std::strerror(errno));
  if (fresh) {
    createdOutputs().files.push_back(p);
    std::fputs(header, f);
  }
  return f;
}
