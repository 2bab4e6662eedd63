"""Shared blocks let go of from several threads at once: each mapping is closed once.

A replay's answer is read on its worker's thread while the cell's thread lets go of the
previous replay's outputs; both close the mappings whose arrays are gone. A block closed
twice closes its file descriptor twice, and the second close hits whatever the process
opened under that number meanwhile (another answer's block: "[Errno 9] Bad file
descriptor" where the replay's outputs are read back).
"""

from __future__ import annotations

import threading

from porter_ext.replay import shared_blocks


def test_a_mapping_let_go_of_is_closed_once_when_two_threads_close_unused_blocks():
    block = shared_blocks.fresh(4096)
    closes: list[str] = []
    inside = threading.Event()
    second_in = threading.Event()
    real_close = block.close

    def close() -> None:  # the real close, slow enough for the other thread to come by
        closes.append(threading.current_thread().name)
        if len(closes) == 1:
            inside.set()
            second_in.wait(timeout=2)
        else:
            second_in.set()
        real_close()

    block.close = close  # type: ignore[method-assign]
    with shared_blocks._lock:
        shared_blocks._closing.append(block)
    first = threading.Thread(target=shared_blocks.close_unused, name="first")
    first.start()
    inside.wait(timeout=10)
    second = threading.Thread(target=shared_blocks.close_unused, name="second")
    second.start()
    first.join(timeout=30)
    second.join(timeout=30)
    block.unlink()
    assert closes == ["first"]
    assert block not in shared_blocks._closing
