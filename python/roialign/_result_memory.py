"""Memory for new results, recycled once the caller has dropped them.

A new result of a few tens of MB is fresh memory to Linux, and the kernel's first write to each page is a fault
that zeroes the page: on the Xeon VM of docs/layouts.md that added 11 ms to a 25 ms call. Inference calls the same
shape again and again and drops each result, so the package keeps the buffers of its large new results (as
PyTorch's caching allocators and ONNX Runtime's arena keep theirs) and gives a buffer out again only when nothing
refers to it any more: no result, view, slice or tensor made from it. Small results are ordinary new memory.
docs/python.md, "Result memory", says what this holds and how to bound it.
"""
import os
import sys
import threading
import weakref

import numpy as np

# Results smaller than this are plain np.empty: their faults are cheap, and keeping them would only hold memory.
MIN_BYTES = 4 << 20
# Default for the bytes of buffers kept, in use or free: a detector's per-image results (1000 RoIs x 256 channels x
# 7 x 7 in f32 is 50 MB) several times over.
DEFAULT_LIMIT_BYTES = 256 << 20
_ALIGNMENT = 64  # a result starts on a cache line, as torch allocates, so the kernels can stream their stores


def aligned_empty(shape, dtype):
    """np.empty starting on a 64-byte boundary. numpy starts large arrays 16 bytes past one, where the kernels
    cannot use streaming stores for the result (docs/layouts.md, "Alignment")."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return _view(np.empty(nbytes + _ALIGNMENT, dtype=np.uint8), shape, dtype, nbytes)


def _view(buffer, shape, dtype, nbytes):
    start = -buffer.ctypes.data % _ALIGNMENT
    return buffer[start:start + nbytes].view(dtype).reshape(shape)


def _refcounts_decide():
    # A buffer is free when the cache's list holds the only reference. Where the GIL is disabled (free-threaded
    # builds), reference counts are deferred, so there the cache keeps nothing.
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    return is_gil_enabled is None or is_gil_enabled()


_INSTANCES = weakref.WeakSet()


def _after_fork_in_child():
    # Another thread of the parent may have held a lock at the fork; the child has only this thread.
    for memory in list(_INSTANCES):
        memory._lock = threading.RLock()
        memory._busy = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class ResultMemory:
    """The buffers of large new results, each reused for a later result once it is free."""

    def __init__(self, limit_bytes=DEFAULT_LIMIT_BYTES):
        # Reentrant, with _busy: a finalizer that the garbage collector runs while this thread holds the lock, and
        # that asks for a result itself, gets new memory instead of a deadlock or a list changed under the loop.
        self._lock = threading.RLock()
        self._busy = False
        self._buffers = []  # uint8 arrays, oldest first; the list holds the cache's only reference to each
        self._limit = limit_bytes
        self._enabled = _refcounts_decide()
        _INSTANCES.add(self)

    def _free(self, i):
        # The list's reference and getrefcount's argument, and nothing else: no array or tensor still uses it.
        return sys.getrefcount(self._buffers[i]) == 2

    def _total(self):
        total = 0
        for buffer in self._buffers:
            total += buffer.nbytes
        return total

    def kept_bytes(self):
        with self._lock:
            return self._total()

    def set_limit(self, limit_bytes):
        """Bounds the bytes kept; free buffers beyond it are released now, and buffers in use beyond it at the
        first call that asks for a result after they became free (never lent again). Returns the previous limit."""
        with self._lock:
            previous, self._limit = self._limit, limit_bytes
            if not self._busy:
                self._release_free(0)
            return previous

    def _release_free(self, incoming):
        """Releases free buffers, oldest first, until the kept bytes plus `incoming` fit the limit; returns the kept
        bytes."""
        total = self._total()
        i = 0
        while total + incoming > self._limit and i < len(self._buffers):
            if self._free(i):
                total -= self._buffers[i].nbytes
                del self._buffers[i]
            else:
                i += 1
        return total

    def empty(self, shape, dtype):
        """A 64-byte aligned array of `shape` and `dtype`: from take() when it gives one, else new."""
        array = self.take(shape, dtype)
        return aligned_empty(shape, dtype) if array is None else array

    def take(self, shape, dtype):
        """A 64-byte aligned array of `shape` and `dtype` in a kept buffer: a free one that fits (at least the size
        and at most twice it, so that a varying RoI count still finds one), else a new one if the limit leaves room.
        None for results under MIN_BYTES and when the buffers in use fill the limit."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if nbytes < MIN_BYTES or not self._enabled:
            return None
        need = nbytes + _ALIGNMENT
        buffer = None
        with self._lock:
            if self._busy:
                return None
            self._busy = True
            try:
                # Free buffers beyond a lowered limit go first, so that nothing beyond it is lent again.
                self._release_free(0)
                best = -1
                for i in range(len(self._buffers)):
                    size = self._buffers[i].nbytes
                    if need <= size <= 2 * need and (best < 0 or size < self._buffers[best].nbytes) and self._free(i):
                        best = i
                if best >= 0:
                    buffer = self._buffers.pop(best)
                    self._buffers.append(buffer)  # most recently used last: released last
                elif self._release_free(need) + need <= self._limit:
                    buffer = np.empty(need, np.uint8)
                    self._buffers.append(buffer)
            finally:
                self._busy = False
        return None if buffer is None else _view(buffer, shape, dtype, nbytes)
