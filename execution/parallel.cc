#include "execution/parallel.h"

#include <omp.h>

#include <algorithm>

namespace roialign {
namespace internal {

int ResolveThreadCount(int32_t num_threads, int64_t max_useful) {
  int64_t threads = num_threads > 0 ? num_threads : omp_get_max_threads();
  threads = std::min<int64_t>(threads, std::max<int64_t>(max_useful, 1));
  return static_cast<int>(std::max<int64_t>(threads, 1));
}

void ParallelFor(int64_t num_tasks, int threads, const std::function<void(int64_t, int)>& body) {
  if (threads <= 1 || num_tasks <= 1) {
    for (int64_t t = 0; t < num_tasks; ++t) body(t, 0);
    return;
  }
  // Dynamic scheduling: RoI sizes vary by orders of magnitude, so equal task counts are not equal work.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t t = 0; t < num_tasks; ++t) body(t, omp_get_thread_num());
}

}  // namespace internal
}  // namespace roialign
