// boo: the parameter block of the test-only bootest kernels, shared by host and device.
#pragma once

namespace boo {

struct TestOpParams {
  unsigned long long x, y;  ///< float32 [n]
  long long n;
  int behaviour;            ///< 0 correct, 1 illegal address, 2 spin forever
  int unused_padding;
};

}  // namespace boo
