// balancenet._engine: the C++ session (session/Session.h) as a Python extension module. torch/extension.h
// makes tensors and the c10d group cross the boundary as torch's own objects: the extension is built against the
// torch of the Python that imports it (_extension.py checks the version and CUDA build), so the group a session
// forms is a torch.distributed.ProcessGroup there, with its Gloo backend.
#include <pybind11/functional.h>
#include <torch/extension.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <cmath>
#include <cstdlib>

#include "balancenet/core/Error.h"
#include "balancenet/data/GlobalPermutationSampler.h"
#include "balancenet/python/SessionConfig.h"
#include "balancenet/session/Session.h"

namespace py = pybind11;
using balancenet::comm::BufferPart;
using balancenet::session::BatchShare;
using balancenet::session::CompressedBuckets;
using balancenet::session::Resume;
using balancenet::session::Session;

namespace {

// Python exceptions of the package's own kinds (balancenet.torch re-exports them): bad input and failures
// of the job, as the command line tells them apart (exit 2 and exit 1).
void registerErrors(py::module_& m) {
  static py::exception<balancenet::UsageError> usage(m, "UsageError", PyExc_ValueError);
  static py::exception<balancenet::RuntimeFailure> failure(m, "JobFailure", PyExc_RuntimeError);
  static py::exception<balancenet::session::JobFinishedBeforeJoin> finished(m, "JobFinishedBeforeJoin",
                                                                            PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const balancenet::UsageError& e) {
      py::set_error(usage, e.what());
    } catch (const balancenet::RuntimeFailure& e) {
      py::set_error(failure, e.what());
    } catch (const balancenet::session::JobFinishedBeforeJoin& e) {
      py::set_error(finished, e.what());
    }
  });
}

// The parts of a bucket as Python gives them: parameter indices (in the module's order) and their shapes.
std::vector<BufferPart> partsOf(const std::vector<int>& parameters, const std::vector<std::vector<int64_t>>& shapes) {
  if (parameters.size() != shapes.size()) throw balancenet::UsageError("a bucket needs one shape per parameter index");
  std::vector<BufferPart> parts;
  for (size_t i = 0; i < parameters.size(); ++i) parts.push_back({parameters[i], shapes[i]});
  return parts;
}

}  // namespace

PYBIND11_MODULE(_engine, m) {
  m.doc() = "balancenet's engine; use it through balancenet.torch";
  m.attr("TORCH_VERSION") = py::str(std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) +
                                    "." + std::to_string(TORCH_VERSION_PATCH));
  m.attr("TORCH_CUDA") = py::str(BALANCENET_TORCH_CUDA);  // "" for a CPU-only torch
  registerErrors(m);

  py::class_<BatchShare>(m, "BatchShare")
      .def_readonly("step", &BatchShare::step)
      .def_readonly("batch", &BatchShare::batch)
      .def_readonly("indices", &BatchShare::indices)
      .def_readonly("weight", &BatchShare::weight);

  py::class_<Resume>(m, "Resume")
      .def_readonly("source_rank", &Resume::sourceRank)
      .def_readonly("step", &Resume::step)
      .def_readonly("batch", &Resume::batch)
      .def_readonly("world_size", &Resume::worldSize)
      .def_property_readonly("state", [](const Resume& r) { return py::bytes(r.state); });

  // Calls that may wait for peers or sleep release the GIL: the loader's workers and Gloo's callbacks go on.
  using release = py::call_guard<py::gil_scoped_release>;
  // The DDP hook's compressed sums (bn.attach(..., grad_compress=)), made by Session.compress_gradients.
  py::class_<CompressedBuckets>(m, "CompressedBuckets")
      .def(
          "start",
          [](CompressedBuckets& c, const std::vector<int>& parameters, const std::vector<std::vector<int64_t>>& shapes,
             const at::Tensor& buffer, int64_t step) { c.start(partsOf(parameters, shapes), buffer, step); },
          py::arg("parameters"), py::arg("shapes"), py::arg("buffer"), py::arg("step"), release())
      .def("finish", &CompressedBuckets::finish, release())
      .def("abandon", &CompressedBuckets::abandon, release())
      .def("describe", &CompressedBuckets::describe);

  py::class_<Session>(m, "Session")
      .def(py::init([](const std::string& runDir) {
             return std::make_unique<Session>(balancenet::python::sessionConfigFromEnvironment(runDir));
           }),
           py::arg("run_dir") = "", release())
      .def_property_readonly("rank", &Session::rank)
      .def_property_readonly("world_size", &Session::worldSize)
      .def_property_readonly("global_batch", &Session::globalBatch)
      .def_property_readonly("run_dir", [](const Session& s) { return s.config().trainer.runDir; })
      .def_property_readonly("steps_done", &Session::stepsDone)
      .def_property_readonly("split", [](const Session& s) { return s.split().batches; })
      .def_property_readonly("data_started", &Session::dataStarted)
      .def_property_readonly("finished", &Session::finished)
      .def_property_readonly("process_group", &Session::processGroup)
      .def_property_readonly("elastic", &Session::elastic)
      .def_property_readonly("generation", &Session::generation)
      .def_property_readonly("next_batch", &Session::nextBatch)
      .def("reform", &Session::reform, py::arg("failure"), release())
      .def_property_readonly("reform_due", &Session::reformDue)
      .def_property_readonly("joined", &Session::joined)
      .def("take_join_state", [](Session& s) { return py::bytes(s.takeJoinState()); })
      .def("set_committed_state", &Session::setCommittedState)
      .def("start_data", &Session::startData, py::arg("dataset_size"), py::arg("global_batch"), py::arg("seed"))
      .def("batches_per_pass", &Session::batchesPerPass)
      .def("loop_checkpoint", &Session::loopCheckpoint)
      .def("restore_loop_checkpoint", &Session::restoreLoopCheckpoint)
      .def("guess_indices", &Session::guessIndices)
      .def("begin_batch", &Session::beginBatch, release())
      .def("batch_loaded", &Session::batchLoaded)
      .def("backward_done", &Session::backwardDone, release())
      .def("reduced", &Session::reduced)
      .def(
          "compress_gradients",
          [](Session& s, const std::string& spec, int warmup, const std::vector<int>& parameters,
             const std::vector<std::vector<int64_t>>& shapes) -> CompressedBuckets& {
            return s.compressGradients(spec, warmup, partsOf(parameters, shapes));
          },
          py::arg("spec"), py::arg("warmup_steps"), py::arg("parameters"), py::arg("shapes"),
          py::return_value_policy::reference_internal)
      .def("end_step", &Session::endStep, py::arg("loss") = NAN, release())
      .def("record_eval", &Session::recordEval, py::arg("accuracy"), py::arg("loss") = NAN)
      .def("set_model_name", &Session::setModelName)
      .def(
          "finish", [](Session& s) { s.finish(); }, release())
      .def("close", &Session::close, release())
      .def_property_readonly("closed", &Session::closed);

  // The engine's sample order, for reference runs in one process: dataset indices at stream positions
  // [begin, begin + count) of the permutation of `seed`.
  m.def(
      "global_indices",
      [](int64_t datasetSize, uint64_t seed, int64_t begin, int64_t count) {
        return balancenet::data::GlobalPermutationSampler(datasetSize, seed).indicesAt(begin, count);
      },
      py::arg("dataset_size"), py::arg("seed"), py::arg("begin"), py::arg("count"));
}
