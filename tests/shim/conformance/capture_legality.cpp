// SPDX-License-Identifier: Apache-2.0
// Which driver calls a thread may make while a stream captures: the calls a memory manager makes
// on a program's behalf (events on the legacy stream, queries, fences, synchronization, virtual
// memory management), each made from the capturing thread and from another one, in every capture
// mode, on a blocking and a non-blocking capturing stream, with and without switching the calling
// thread to the relaxed mode first (cuThreadExchangeStreamCaptureMode). Prints one fact per case:
// the call's answer and how the capture ended. Facts only: run it without the shim.

#include "conformance.hpp"

#include <functional>
#include <thread>
#include <vector>

using namespace conformance;

namespace {

struct objects {
  CUstream idle{};           // a non-blocking stream with no work
  CUstream idle_blocking{};  // a blocking stream with no work
  CUevent done{};            // recorded on `idle` before the capture (complete)
  CUevent spare{};           // never recorded
  CUdeviceptr block{};       // cuMemAlloc'd before the capture
  CUstream capturing{};
};

using operation = std::function<CUresult(objects&)>;

struct named_operation {
  char const* name;
  operation run;
};

std::vector<named_operation> operations()
{
  return {
    {"cuEventRecord.legacy", [](objects& o) { return cuEventRecord(o.spare, CU_STREAM_LEGACY); }},
    {"cuEventRecord.idle_non_blocking", [](objects& o) { return cuEventRecord(o.spare, o.idle); }},
    {"cuEventRecord.idle_blocking", [](objects& o) { return cuEventRecord(o.spare, o.idle_blocking); }},
    {"cuEventQuery.completed", [](objects& o) { return cuEventQuery(o.done); }},
    {"cuEventSynchronize.completed", [](objects& o) { return cuEventSynchronize(o.done); }},
    {"cuStreamQuery.idle_non_blocking", [](objects& o) { return cuStreamQuery(o.idle); }},
    {"cuStreamQuery.legacy", [](objects&) { return cuStreamQuery(CU_STREAM_LEGACY); }},
    {"cuStreamQuery.capturing", [](objects& o) { return cuStreamQuery(o.capturing); }},
    {"cuStreamSynchronize.idle_non_blocking", [](objects& o) { return cuStreamSynchronize(o.idle); }},
    {"cuStreamSynchronize.legacy", [](objects&) { return cuStreamSynchronize(CU_STREAM_LEGACY); }},
    {"cuStreamWaitEvent.idle_non_blocking", [](objects& o) { return cuStreamWaitEvent(o.idle, o.done, 0); }},
    {"cuStreamIsCapturing.capturing",
     [](objects& o) {
       CUstreamCaptureStatus status{};
       return cuStreamIsCapturing(o.capturing, &status);
     }},
    {"cuStreamGetId.capturing",
     [](objects& o) {
       unsigned long long id = 0;
       return cuStreamGetId(o.capturing, &id);
     }},
    {"cuCtxSynchronize", [](objects&) { return cuCtxSynchronize(); }},
    {"cuEventCreate+Destroy",
     [](objects&) {
       CUevent e{};
       auto const r = cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
       if (r != CUDA_SUCCESS) { return r; }
       return cuEventDestroy(e);
     }},
    {"cuStreamCreate+Destroy.non_blocking",
     [](objects&) {
       CUstream s{};
       auto const r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
       if (r != CUDA_SUCCESS) { return r; }
       return cuStreamDestroy(s);
     }},
    {"cuMemAlloc+Free",
     [](objects&) {
       CUdeviceptr p{};
       auto const r = cuMemAlloc(&p, 1 << 20);
       if (r != CUDA_SUCCESS) { return r; }
       return cuMemFree(p);
     }},
    {"cuMemGetInfo",
     [](objects&) {
       std::size_t free = 0, total = 0;
       return cuMemGetInfo(&free, &total);
     }},
    {"cuMemAllocAsync+FreeAsync.idle_non_blocking",
     [](objects& o) {
       CUdeviceptr p{};
       auto const r = cuMemAllocAsync(&p, 1 << 20, o.idle);
       if (r != CUDA_SUCCESS) { return r; }
       return cuMemFreeAsync(p, o.idle);
     }},
    {"vmm.reserve+create+map+access+unmap+release",
     [](objects&) {
       CUmemAllocationProp prop{};
       prop.type               = CU_MEM_ALLOCATION_TYPE_PINNED;
       prop.location.type      = CU_MEM_LOCATION_TYPE_DEVICE;
       prop.location.id        = 0;
       std::size_t granularity = 0;
       if (auto r = cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM); r) {
         return r;
       }
       CUdeviceptr va{};
       if (auto r = cuMemAddressReserve(&va, granularity, 0, 0, 0); r) { return r; }
       CUmemGenericAllocationHandle h{};
       if (auto r = cuMemCreate(&h, granularity, &prop, 0); r) { return r; }
       if (auto r = cuMemMap(va, granularity, 0, h, 0); r) { return r; }
       CUmemAccessDesc access{};
       access.location = prop.location;
       access.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
       if (auto r = cuMemSetAccess(va, granularity, &access, 1); r) { return r; }
       if (auto r = cuMemUnmap(va, granularity); r) { return r; }
       if (auto r = cuMemRelease(h); r) { return r; }
       return cuMemAddressFree(va, granularity);
     }},
  };
}

char const* mode_name(CUstreamCaptureMode mode)
{
  switch (mode) {
    case CU_STREAM_CAPTURE_MODE_GLOBAL: return "global";
    case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: return "thread_local";
    default: return "relaxed";
  }
}

/// `run`, with the calling thread switched to the relaxed mode around it when `relaxed`.
CUresult call(operation const& run, objects& o, bool relaxed)
{
  CUstreamCaptureMode previous = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (relaxed) { require(cuThreadExchangeStreamCaptureMode(&previous), "cuThreadExchangeStreamCaptureMode"); }
  auto const r = run(o);
  if (relaxed) { require(cuThreadExchangeStreamCaptureMode(&previous), "cuThreadExchangeStreamCaptureMode"); }
  return r;
}

}  // namespace

int main()
{
  require(cuInit(0), "cuInit");
  CUdevice device{};
  require(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context{};
  require(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  require(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUdeviceptr target{};
  require(cuMemAlloc(&target, 1 << 20), "cuMemAlloc");
  for (auto const& op : operations()) {
    for (auto mode :
         {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, CU_STREAM_CAPTURE_MODE_RELAXED}) {
      for (unsigned flags : {unsigned{CU_STREAM_NON_BLOCKING}, unsigned{CU_STREAM_DEFAULT}}) {
        for (bool other_thread : {false, true}) {
          for (bool relaxed : {false, true}) {
            objects o;
            require(cuStreamCreate(&o.idle, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
            require(cuStreamCreate(&o.idle_blocking, CU_STREAM_DEFAULT), "cuStreamCreate");
            require(cuEventCreate(&o.done, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
            require(cuEventCreate(&o.spare, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
            require(cuEventRecord(o.done, o.idle), "cuEventRecord");
            require(cuCtxSynchronize(), "cuCtxSynchronize");
            require(cuStreamCreate(&o.capturing, flags), "cuStreamCreate");
            require(cuStreamBeginCapture(o.capturing, mode), "cuStreamBeginCapture");
            (void)cuMemsetD8Async(target, 1, 1 << 20, o.capturing);
            CUresult answer{};
            if (other_thread) {
              std::thread t{[&] {
                require(cuCtxSetCurrent(context), "cuCtxSetCurrent");
                answer = call(op.run, o, relaxed);
              }};
              t.join();
            } else {
              answer = call(op.run, o, relaxed);
            }
            CUgraph graph{};
            auto const ended = cuStreamEndCapture(o.capturing, &graph);
            if (graph != nullptr) { (void)cuGraphDestroy(graph); }
            fact(std::string{"legal."} + op.name + "." + mode_name(mode) +
                   (flags == CU_STREAM_NON_BLOCKING ? ".non_blocking" : ".blocking") +
                   (other_thread ? ".other_thread" : ".same_thread") + (relaxed ? ".relaxed" : ""),
                 name_of(answer) + "/" + name_of(ended));
            (void)cuCtxSynchronize();
            (void)cuStreamDestroy(o.capturing);
            (void)cuStreamDestroy(o.idle);
            (void)cuStreamDestroy(o.idle_blocking);
            (void)cuEventDestroy(o.done);
            (void)cuEventDestroy(o.spare);
          }
        }
      }
    }
  }
  return 0;
}
