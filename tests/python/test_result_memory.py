"""Tests of the recycled memory of large new results (python/roialign/_result_memory.py, docs/python.md "Result
memory"): a buffer comes back only when nothing refers to it, the limit bounds what is kept, and results written
into recycled memory are the results of new memory."""
import os
import signal
import threading

import numpy as np
import pytest

import roialign

try:
    import torch
except Exception:  # ImportError, or a broken torch install
    if os.environ.get("ROIALIGN_REQUIRE_TORCHVISION") == "1":
        raise
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not importable")

# 3000 RoIs x 64 channels x 7 x 7 in f32 = 37.6 MB: above the 4 MiB below which results are plain new memory.
K, C = 3000, 64


@pytest.fixture(autouse=True)
def default_limit():
    previous = roialign.set_result_memory_limit(256 << 20)
    yield
    roialign.set_result_memory_limit(previous)


def _inputs(seed, kind="numpy"):
    rng = np.random.default_rng(seed)
    x = rng.random((1, 40, 40, C), dtype=np.float32)  # NHWC
    xy = rng.uniform(0, 120, (K, 2)).astype(np.float32)
    wh = rng.uniform(4, 40, (K, 2)).astype(np.float32)
    boxes = np.concatenate([np.zeros((K, 1), np.float32), xy, xy + wh], axis=1)
    if kind == "torch":
        return torch.from_numpy(x).permute(0, 3, 1, 2), torch.from_numpy(boxes)
    return x, boxes


def _call(x, boxes, **kw):
    return roialign.roi_align(x, boxes, 7, 0.25, 2, layout="NHWC", **kw)


def _address(y):
    return y.data_ptr() if torch is not None and isinstance(y, torch.Tensor) else y.ctypes.data


def _into_new_memory(x, boxes):
    """The result of the same call into memory the package does not keep."""
    previous = roialign.set_result_memory_limit(0)
    try:
        return _call(x, boxes)
    finally:
        roialign.set_result_memory_limit(previous)


@pytest.mark.parametrize("kind", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_a_dropped_result_lends_its_memory_to_the_next(kind):
    x, boxes = _inputs(1, kind)
    y = _call(x, boxes)
    address = _address(y)
    assert address % 64 == 0
    del y
    x2, boxes2 = _inputs(2, kind)
    y2 = _call(x2, boxes2)
    assert _address(y2) == address
    expected = _into_new_memory(x2, boxes2)
    assert np.array_equal(np.asarray(y2), np.asarray(expected))


@pytest.mark.parametrize("kind", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_memory_in_use_is_never_lent(kind):
    # A live result, a slice of a dropped one, and (torch) a tensor made from one keep their memory.
    x, boxes = _inputs(3, kind)
    first = _call(x, boxes)
    first_copy = first.clone() if kind == "torch" else first.copy()
    second = _call(*_inputs(4, kind))
    assert _address(second) != _address(first)
    part = second[:5]
    part_copy = part.clone() if kind == "torch" else part.copy()
    del second
    third = _call(*_inputs(5, kind))
    assert _address(third) not in (_address(first), _address(part))
    if kind == "numpy" and torch is not None:
        shared = torch.from_numpy(third)
        address = _address(third)
        del third
        fourth = _call(*_inputs(6, kind))
        assert _address(fourth) != address
        assert shared.data_ptr() == address
    assert np.array_equal(np.asarray(first), np.asarray(first_copy))
    assert np.array_equal(np.asarray(part), np.asarray(part_copy))


def test_the_limit_bounds_the_memory_kept():
    x, boxes = _inputs(7)
    roialign.set_result_memory_limit(0)
    y = _call(x, boxes)
    assert roialign._RESULT_MEMORY.kept_bytes() == 0
    del y
    # Room for one result: a second live result is new memory, not kept.
    assert roialign.set_result_memory_limit(50 << 20) == 0
    a = _call(x, boxes)
    b = _call(x, boxes)
    kept = roialign._RESULT_MEMORY.kept_bytes()
    assert a.nbytes <= kept <= 50 << 20
    assert np.array_equal(a, b)
    del a, b
    # Lowering the limit releases the free buffers at once.
    roialign.set_result_memory_limit(0)
    assert roialign._RESULT_MEMORY.kept_bytes() == 0


def test_a_lowered_limit_releases_buffers_in_use_once_they_are_free():
    x, boxes = _inputs(11)
    a = _call(x, boxes)
    b = _call(x, boxes)
    assert roialign._RESULT_MEMORY.kept_bytes() >= a.nbytes + b.nbytes
    roialign.set_result_memory_limit(40 << 20)  # both in use: nothing can go yet
    assert roialign._RESULT_MEMORY.kept_bytes() >= a.nbytes + b.nbytes
    del a, b
    c = _call(x, boxes)
    assert c.nbytes <= roialign._RESULT_MEMORY.kept_bytes() <= 40 << 20
    roialign.set_result_memory_limit(0)
    del c
    d = _call(x, boxes)
    assert roialign._RESULT_MEMORY.kept_bytes() == 0
    assert np.array_equal(d, _into_new_memory(x, boxes))


def test_small_results_are_not_kept():
    x, boxes = _inputs(8)
    before = roialign._RESULT_MEMORY.kept_bytes()
    y = _call(x, boxes[:100])  # 1.25 MB
    assert roialign._RESULT_MEMORY.kept_bytes() == before
    assert y.ctypes.data % 64 == 0


def test_a_buffer_serves_a_smaller_result_up_to_half_its_size():
    x, boxes = _inputs(9)
    y = _call(x, boxes)
    address = _address(y)
    del y
    smaller = _call(x, boxes[: K * 2 // 3])
    assert _address(smaller) == address
    assert np.array_equal(smaller, _into_new_memory(x, boxes[: K * 2 // 3]))
    del smaller
    tiny = _call(x, boxes[: K // 3])  # under half: new memory, the kept buffer stays for a result of its size
    assert _address(tiny) != address


def test_bad_limits_are_refused():
    with pytest.raises(TypeError, match="nbytes must be an int"):
        roialign.set_result_memory_limit(1.5)
    with pytest.raises(TypeError, match="nbytes must be an int"):
        roialign.set_result_memory_limit(True)
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        roialign.set_result_memory_limit(-1)


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_torch_results_in_recycled_memory(dtype):
    x, boxes = _inputs(10, "torch")
    x = x.to(getattr(torch, dtype))
    y = _call(x, boxes)
    del y
    y = _call(x, boxes)
    assert y.dtype == getattr(torch, dtype)
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(y, _into_new_memory(x, boxes))


def test_threads_never_share_a_buffer():
    # Each thread keeps its results while the other calls; every result must be its own call's.
    cases = [_inputs(20 + i) for i in range(2)]
    expected = [_into_new_memory(x, b) for x, b in cases]
    failures = []

    def work(i):
        x, boxes = cases[i]
        held = []
        for _ in range(6):
            y = _call(x, boxes)
            held.append(y)
            if len(held) > 2:
                held.pop(0)
            if not all(np.array_equal(h, expected[i]) for h in held):
                failures.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_a_call_made_while_the_cache_is_busy_gets_new_memory():
    # As when the garbage collector runs, inside take(), a finalizer that asks for a result: the same thread
    # re-enters the lock and must get new memory, not a deadlock or a buffer picked while the list changes.
    x, boxes = _inputs(13)
    memory = roialign._RESULT_MEMORY
    with memory._lock:
        memory._busy = True
        try:
            kept = memory.kept_bytes()
            y = _call(x, boxes)
            assert memory.kept_bytes() == kept
        finally:
            memory._busy = False
    assert np.array_equal(y, _into_new_memory(x, boxes))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_child_forked_while_another_thread_holds_the_lock_can_take():
    x, boxes = _inputs(14)
    held, release = threading.Event(), threading.Event()

    def hold():
        with roialign._RESULT_MEMORY._lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30)
    pid = os.fork()
    if pid == 0:  # the child: one thread (1 kernel thread: no OpenMP team after the fork), and the lock looks held
        ok = False
        try:
            signal.alarm(60)  # a deadlock ends the child, and the test fails
            y = _call(x, boxes, num_threads=1)
            ok = roialign._RESULT_MEMORY.kept_bytes() >= y.nbytes
        finally:
            os._exit(0 if ok else 1)
    release.set()
    holder.join()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
