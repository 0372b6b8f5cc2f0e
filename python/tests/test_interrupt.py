"""Ctrl-C stops a long scan or dedup: the work runs off the GIL, and the calling thread keeps
looking for signals, so KeyboardInterrupt is raised as soon as the work winds down."""

from __future__ import annotations

import os
import signal
import threading

import pyarrow as pa
import pytest

import ndup

# Enough texts that the work takes seconds (the tests use a debug build), far longer than the
# moment the signal is sent.
TEXTS = [
    f"document {i} about topic {i % 991} with words {i * 7919 % 100003} " * 6
    for i in range(200_000)
]


def interrupt_soon():
    """Sends SIGINT to this process in a moment, once the call has started."""
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()


def test_ctrl_c_stops_a_scan_and_the_next_call_works():
    interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        ndup.scan(TEXTS, threshold=0.8)
    # Nothing is left running or broken: the next scan gives its answer.
    same = "the same words in the same order, long enough to be shingled"
    found = ndup.scan([same, same])
    assert [(p.a, p.b) for p in found.pairs] == [(0, 1)]


def test_ctrl_c_stops_a_dedup():
    table = pa.table({"text": TEXTS})
    interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        ndup.dedup_arrow(table)
