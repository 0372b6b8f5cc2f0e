#!/usr/bin/env bash
# The Spark job's CI (issue 25): runs spark/test_spark.py, which checks the job in local mode
# against the `ndup` command line of this checkout. Works on a fresh machine (Python 3.9+ with
# venv, a Rust toolchain and the package registries); .ci/run calls it.
#
# - a virtual environment in target/spark-venv (git ignores target/), with the pinned
#   spark/requirements.txt (PySpark brings its own Spark jars: nothing else is downloaded);
# - a Java runtime from the system packages, only when `java` is missing;
# - the debug build of ndup (`cargo test` has usually built it already, so this is a no-op):
#   the test's 3,000 documents take ndup well under a second even unoptimized, and a release
#   build would cost CI minutes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$root/target/spark-venv"

if ! command -v java >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends default-jre-headless >/dev/null
fi
if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"

cargo build --quiet --bin ndup --manifest-path "$root/Cargo.toml"
export NDUP_BIN="$target/debug/ndup"
# Spark on the loopback interface only, and quiet about the host name.
export SPARK_LOCAL_IP=127.0.0.1
export PYSPARK_PYTHON="$venv/bin/python"

cd "$here"
"$venv/bin/python" -m pytest -q -p no:cacheprovider test_spark.py
