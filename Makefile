# qtrain's entry points. The README's two commands are `make demo` and
# `make test`; both install what they need first (scripts/setup.sh).

BUILD_DIR ?= build
export BUILD_DIR

.PHONY: all build demo test check format clean

all: build

# Install the Debian packages, configure and build.
build:
	scripts/setup.sh

# The main job: compile LeNet with CPT 3-8/8 and train it on Fashion-MNIST.
demo: build
	scripts/demo.sh

# Install, build and run every lit test and every GoogleTest binary.
test: build
	cmake --build $(BUILD_DIR) --target check-qtrain

# Run the tests of an existing build without touching packages.
check:
	cmake --build $(BUILD_DIR) --target check-qtrain

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format-22 -i

clean:
	rm -rf $(BUILD_DIR)
