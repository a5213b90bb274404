// A library linked against libcuda and loaded RTLD_LOCAL by a program that is not (PyTorch loads
// TorchInductor's C++ wrapper so): its calls bind to libcapguard.so's exports, and libcuda lies
// in this library's own lookup scope only, where RTLD_NEXT from libcapguard.so does not reach.
int cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   void*, void**, void**);
int cuStreamBeginCaptureToGraph(void*, void*, const void*, const void*, unsigned long long, int);
int fake_cuda_launches(void);
int fake_cuda_guarded_calls(void);

// How many of the two calls reached libcuda with their arguments intact.
int local_user_calls(void) {
  int reached = 0;
  const int launches = fake_cuda_launches(), guarded = fake_cuda_guarded_calls();
  if (cuLaunchKernel((void*)0x1000, 1, 1, 1, 32, 1, 1, 0, (void*)0x5000, 0, 0) == 0 &&
      fake_cuda_launches() == launches + 1)
    ++reached;
  if (cuStreamBeginCaptureToGraph((void*)0x5000, (void*)0x6000, (void*)0x7000, (void*)0x8000,
                                  0x123456789ull, 2) == 0 &&
      fake_cuda_guarded_calls() == guarded + 1)
    ++reached;
  return reached;
}
