# qtrain's entry points. The README's two commands are `make demo` and
# `make test`; both install what they need first (scripts/setup.sh).

BUILD_DIR ?= build
export BUILD_DIR

.PHONY: all build demo test check fuzz format clean

all: build

# Install the Debian packages, configure and build.
build:
	scripts/setup.sh

# The main job: compile LeNet with CPT 3-8/8 and train it on Fashion-MNIST.
demo: build
	scripts/demo.sh

# Install (with the packages only tests use: PyTorch for benchmarks/step),
# build and run every lit test and every GoogleTest binary, then
# every fuzzing harness briefly (FUZZ_SECONDS each; scripts/fuzz.sh), the IR
# harness's smoke run (scripts/fuzz-ir.sh --smoke) and the runtime's and
# microkernels' unit tests under ASan+UBSan (scripts/sanitize.sh runtime).
FUZZ_SECONDS ?= 15
test:
	scripts/setup.sh --tests
	cmake --build $(BUILD_DIR) --target check-qtrain
	scripts/fuzz.sh $(FUZZ_SECONDS)
	scripts/fuzz-ir.sh --smoke
	scripts/sanitize.sh runtime

# Run the tests of an existing build without touching packages.
check:
	cmake --build $(BUILD_DIR) --target check-qtrain

# Every fuzzing harness for FUZZ_SECONDS (default 15; longer runs:
# make fuzz FUZZ_SECONDS=600).
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format-22 -i

clean:
	rm -rf $(BUILD_DIR)
