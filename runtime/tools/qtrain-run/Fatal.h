//===- Fatal.h - qtrain-run errors and the outputs they remove --*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// How qtrain-run stops on an error: the message on stderr, an exit code
/// (1, or 2 for a bad command line), and the removal of what the run
/// created of its output while none of its steps is logged.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_FATAL_H
#define QTRAIN_RUN_FATAL_H

#include <string>
#include <vector>

namespace qtrain::run {

/// What this run created of its output (the folder and the logs), while
/// no step of it is logged: an error then (a flag value found bad only at
/// the first step, such as a too small --max-step-memory) removes them, so
/// that they do not block the corrected rerun as "an earlier run".
struct CreatedOutputs {
  std::vector<std::string> files, directories;
  bool armed = true;

  void remove();
};

/// The run's one record of what it created.
CreatedOutputs &createdOutputs();

/// Prints "qtrain-run: error: `message`", removes the created outputs and
/// exits with `code`.
[[noreturn]] void die(const std::string &message, int code = 1);

/// A rank of a data-parallel job (Distributed.h): die() then starts its
/// messages with `prefix` ("rank 1: ") and ends the whole job through
/// `exitJob` (the other ranks would otherwise wait for this one forever).
void setJobExit(void (*exitJob)(int code), std::string prefix);

} // namespace qtrain::run

#endif // QTRAIN_RUN_FATAL_H
