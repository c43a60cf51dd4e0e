//===- Fatal.cpp - qtrain-run's errors and the outputs they remove --------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Fatal.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace qtrain::run;

void CreatedOutputs::remove() {
  if (!armed)
    return;
  armed = false;
  for (const std::string &f : files)
    (void)::unlink(f.c_str());
  // Innermost first; a folder that holds anything else stays.
  for (auto it = directories.rbegin(); it != directories.rend(); ++it)
    (void)::rmdir(it->c_str());
}

CreatedOutputs &qtrain::run::createdOutputs() {
  static CreatedOutputs outputs;
  return outputs;
}

namespace {
void (*jobExit)(int) = nullptr;
std::string &rankPrefix() {
  static std::string prefix;
  return prefix;
}
} // namespace

void qtrain::run::setJobExit(void (*exitJob)(int), std::string prefix) {
  jobExit = exitJob;
  rankPrefix() = std::move(prefix);
}

void qtrain::run::die(const std::string &message, int code) {
  std::fprintf(stderr, "qtrain-run: error: %s%s\n", rankPrefix().c_str(),
               message.c_str());
  std::fflush(nullptr);
  createdOutputs().remove();
  if (jobExit)
    jobExit(code);
  std::exit(code);
}
