// Starting MPI once per process, finishing it at exit, and knowing whether a launcher started
// this process.
#include "comm.hpp"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace polygrad::ccl_mpi {

namespace {

std::atomic<bool> broken_process{false};
std::mutex start_mutex;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // MPI_Finalize synchronises with the peers: after one died it would never return.
  if (!finalized && !broken_process.load()) MPI_Finalize();
}

}  // namespace

std::mutex& mpi_mutex() {
  static std::mutex mutex;
  return mutex;
}

void mark_broken_process() {
  broken_process.store(true);
}

bool under_launcher(std::string& why) {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    if (std::getenv(var) != nullptr) {
      why = std::string("started by an MPI launcher (") + var + " is set)";
      return true;
    }
  }
  why =
      "not started by an MPI launcher (no OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE): only "
      "a world of size 1";
  return false;
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "MPI";
  std::string v(text, static_cast<size_t>(len));
  size_t cut = v.find_first_of(",\n");
  return cut == std::string::npos ? v : v.substr(0, cut);
}

void start_mpi(double timeout_seconds) {
  std::lock_guard lock(start_mutex);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;  // by us earlier, or by the program (mpi4py)
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) sdk::fail(PG_ERR_DEVICE, "MPI was already finalised in this process");
  // The host loads this plugin RTLD_LOCAL; Open MPI's own components (separate libraries it
  // opens at MPI_Init) resolve symbols of libmpi, which must therefore be global.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) != 0 && info.dli_fname != nullptr)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  // MPI_Init waits for every rank of the job to start MPI, with no deadline of its own: it runs
  // on a thread of its own, and a rank that never comes is a timeout. That thread is then left
  // waiting (MPI is unusable in this process either way).
  struct Start {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    int rc = MPI_SUCCESS;
    int provided = 0;
  };
  auto start = std::make_shared<Start>();
  std::thread([start] {
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    std::lock_guard lock(start->mutex);
    start->rc = rc;
    start->provided = provided;
    start->done = true;
    start->done_cv.notify_all();
  }).detach();
  std::unique_lock started(start->mutex);
  if (!start->done_cv.wait_for(started, std::chrono::duration<double>(timeout_seconds),
                               [&] { return start->done; })) {
    mark_broken_process();
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeout_seconds);
    sdk::fail(PG_ERR_TIMEOUT, std::string("MPI_Init did not finish within ") + seconds +
                                  " s: a rank of this job has not started MPI (it may have "
                                  "died or be stuck before it)");
  }
  const int rc = start->rc, provided = start->provided;
  if (rc != MPI_SUCCESS)
    sdk::fail(PG_ERR_DEVICE, "MPI_Init_thread failed with code " + std::to_string(rc));
  if (provided < MPI_THREAD_SERIALIZED)
    sdk::fail(PG_ERR_UNSUPPORTED, "MPI provides thread level " + std::to_string(provided) +
                                      ", below MPI_THREAD_SERIALIZED");
  std::atexit(finalize_at_exit);
}

}  // namespace polygrad::ccl_mpi
