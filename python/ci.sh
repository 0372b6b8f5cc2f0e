#!/usr/bin/env bash
# The Python module's CI: builds it in a virtual environment and runs its tests, which check it
# against the `ndup` command line of this checkout. Works on a fresh machine (Python 3.9+ with
# venv, a Rust toolchain and the package registries); .ci/run calls it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
# The command line's target directory, and a separate one for the extension, so that neither
# build waits for the other's lock or rebuilds the other's artifacts.
cli_target="${CARGO_TARGET_DIR:-$root/target}"
venv="$root/target/python-venv"

if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-dev.txt"

# The binary the tests compare against: `cargo test` has usually built it already.
CARGO_TARGET_DIR="$cli_target" cargo build --quiet --bin ndup --manifest-path "$root/Cargo.toml"
export NDUP_BIN="$cli_target/debug/ndup"

# A debug build: the tests need correctness, not speed, and it compiles in a fraction of the
# time of the release profile.
(
    cd "$here"
    CARGO_TARGET_DIR="$root/target/python" VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
        maturin develop --quiet
)
cd "$here"
"$venv/bin/python" -m pytest -q tests
