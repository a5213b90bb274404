#include "report/inner_frames.h"

#include "model/frame_owner.h"

namespace capguard {

size_t inner_frame_count(const Location& location) {
  size_t first = first_frame_outside_cuda(location.frames);
  if (first >= location.frames.size()) return 0;
  if (location.user_frame >= 0 && first > static_cast<size_t>(location.user_frame))
    first = static_cast<size_t>(location.user_frame);
  return first;
}

}  // namespace capguard
