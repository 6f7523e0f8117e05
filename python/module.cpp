// myattn._myattn: the C++ side of the Python package. forward reads NumPy arrays or CPU torch
// tensors in place (float32, C-contiguous: anything else is refused, never copied) and runs with
// the GIL released. torch is never imported from here: it is looked up in sys.modules only once
// an input is not a NumPy array, so the package works where torch is not installed. Outputs for
// torch inputs are NumPy arrays wrapped by torch.from_numpy, which shares their memory, unless
// the caller passes its own through out= (torch's convention), which saves making them. A module
// of precision bf16 also reads V as a torch.bfloat16 tensor (NumPy has no bfloat16 dtype).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "myattn/myattn.hpp"

namespace py = pybind11;

namespace {

using myattn::ConstTensor;
using myattn::Shape;

myattn::Isa isa_from_name(const std::optional<std::string>& name) {
    if (!name) return myattn::active_isa();
    if (const auto isa = myattn::parse_isa(*name)) return *isa;
    throw myattn::IsaError("isa: unknown ISA " + myattn::safetensors::in_quotes(*name) +
                           " (compiled in: " + myattn::to_string(myattn::compiled_isas(), ", ") +
                           "; runnable here: " + myattn::to_string(myattn::runnable_isas(), ", ") + ")");
}

myattn::Precision precision_from_name(const std::optional<std::string>& name) {
    return name ? myattn::parse_precision(*name) : myattn::Precision::f32;
}

// torch.Tensor, torch.float32, torch.bfloat16, torch.strided and torch.from_numpy, once torch has been imported
// by the caller, and the attribute names a tensor is read through, made once (attr("name") makes
// a new string per call).
struct Torch {
    py::object tensor_type, float32, bfloat16, strided, from_numpy;
    py::str dtype{"dtype"}, is_cpu{"is_cpu"}, layout{"layout"}, is_contiguous{"is_contiguous"}, shape{"shape"},
        data_ptr{"data_ptr"}, requires_grad{"requires_grad"};
};

const Torch* torch_if_imported() {
    // Only touched with the GIL held. Never freed: a static py::object would be released after
    // the interpreter is gone.
    static const Torch* torch = nullptr;
    if (torch == nullptr) {
        const py::dict modules = py::module_::import("sys").attr("modules");
        if (!modules.contains("torch")) return nullptr;
        const py::object m = modules["torch"];
        if (m.is_none()) return nullptr; // an import of torch was blocked
        torch =
            new Torch{m.attr("Tensor"), m.attr("float32"), m.attr("bfloat16"), m.attr("strided"), m.attr("from_numpy")};
    }
    return torch;
}

enum class Kind { numpy, torch };

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__qualname__")); }

[[noreturn]] void type_error(const char* name, py::handle h) {
    throw py::type_error(std::string(name) + ": expected a NumPy array or a CPU torch.Tensor of float32, got " +
                         type_name(h));
}

// A torch.Size as a Shape. It is a tuple subclass, read as a tuple: the generic sequence calls
// would copy it into a list first.
Shape shape_of(const char* name, py::handle sizes, std::size_t expected_rank) {
    if (!PyTuple_Check(sizes.ptr())) throw py::type_error(std::string(name) + ".shape: expected a tuple");
    const auto rank = static_cast<std::size_t>(PyTuple_GET_SIZE(sizes.ptr()));
    if (rank > Shape::max_rank)
        throw py::value_error(std::string(name) + ": expected a tensor of rank " + std::to_string(expected_rank) +
                              ", got rank " + std::to_string(rank));
    std::size_t extents[Shape::max_rank];
    for (std::size_t i = 0; i < rank; ++i) {
        extents[i] = PyLong_AsSize_t(PyTuple_GET_ITEM(sizes.ptr(), static_cast<Py_ssize_t>(i)));
        if (PyErr_Occurred()) throw py::error_already_set();
    }
    return Shape(std::span<const std::size_t>(extents, rank));
}

ConstTensor numpy_view(const char* name, py::handle h, std::size_t expected_rank = 3) {
    auto* proxy = py::detail::array_proxy(h.ptr());
    const auto* descr = py::detail::array_descriptor_proxy(proxy->descr);
    if (descr->type_num != py::detail::npy_api::NPY_FLOAT_ || descr->byteorder == '>')
        throw py::type_error(std::string(name) + ": expected dtype float32, got " +
                             std::string(py::str(py::reinterpret_borrow<py::object>(proxy->descr))));
    if (!(proxy->flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_))
        throw py::value_error(std::string(name) + ": expected a C-contiguous array (myattn reads it in place and "
                                                  "does not copy; numpy.ascontiguousarray makes one)");
    if (proxy->nd > static_cast<int>(Shape::max_rank))
        throw py::value_error(std::string(name) + ": expected a tensor of rank " + std::to_string(expected_rank) +
                              ", got rank " + std::to_string(proxy->nd));
    std::size_t extents[Shape::max_rank];
    for (int i = 0; i < proxy->nd; ++i) extents[i] = static_cast<std::size_t>(proxy->dimensions[i]);
    return {reinterpret_cast<const float*>(proxy->data),
            Shape(std::span<const std::size_t>(extents, static_cast<std::size_t>(proxy->nd)))};
}

// h.name and h.name(), through the C API: pybind11's accessors cost more, and calling the method
// this way makes no bound-method object.
py::object get_attr(py::handle h, const py::str& name) {
    PyObject* r = PyObject_GetAttr(h.ptr(), name.ptr());
    if (r == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
}

py::object call_method(py::handle h, const py::str& name) {
    PyObject* r = PyObject_CallMethodNoArgs(h.ptr(), name.ptr());
    if (r == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
}

// The checks and the reads of a CPU torch tensor of `dtype` (torch.float32, or torch.bfloat16
// for a bf16 V): its shape and its data, read in place.
template <class T>
myattn::TensorView<const T> torch_view_of(const char* name, py::handle h, const Torch& torch,
                                          std::size_t expected_rank = 3) {
    const py::object dtype = get_attr(h, torch.dtype);
    const bool is_float = std::is_same_v<T, float>;
    if (!dtype.is(is_float ? torch.float32 : torch.bfloat16))
        throw py::type_error(std::string(name) + ": expected dtype " + (is_float ? "torch.float32" : "torch.bfloat16") +
                             ", got " + std::string(py::str(dtype)));
    if (!get_attr(h, torch.is_cpu).is(py::handle(Py_True)))
        throw py::value_error(std::string(name) + ": expected a CPU tensor, got one on " +
                              std::string(py::str(h.attr("device"))) + " (.cpu() moves it)");
    const py::object layout = get_attr(h, torch.layout);
    if (!layout.is(torch.strided))
        throw py::value_error(std::string(name) + ": expected a dense tensor, got layout " +
                              std::string(py::str(layout)) + " (.to_dense() makes one)");
    if (!call_method(h, torch.is_contiguous).is(py::handle(Py_True)))
        throw py::value_error(std::string(name) + ": expected a contiguous tensor (myattn reads it in place and does "
                                                  "not copy; .contiguous() makes one)");
    const Shape shape = shape_of(name, get_attr(h, torch.shape), expected_rank);
    const py::object data_ptr = call_method(h, torch.data_ptr);
    const void* data = PyLong_AsVoidPtr(data_ptr.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    return {static_cast<const T*>(data), shape};
}

ConstTensor torch_view(const char* name, py::handle h, const Torch& torch, std::size_t expected_rank = 3) {
    return torch_view_of<float>(name, h, torch, expected_rank);
}

bool is_bfloat16_tensor(py::handle h, const Torch& torch) { return get_attr(h, torch.dtype).is(torch.bfloat16); }

// An uninitialised C-contiguous float32 array, straight from NumPy's C API: pybind11's array_t
// constructor builds a dtype and shape and stride vectors per call, a sizeable part of a
// forward at the article's shape.
py::array new_float_array(const Shape& shape) {
    auto& api = py::detail::npy_api::get();
    static PyObject* const float32 = api.PyArray_DescrFromType_(py::detail::npy_api::NPY_FLOAT_); // kept for good
    Py_intptr_t dims[Shape::max_rank];
    for (std::size_t i = 0; i < shape.rank(); ++i) dims[i] = static_cast<Py_intptr_t>(shape[i]);
    Py_INCREF(float32); // PyArray_NewFromDescr steals a reference
    PyObject* array = api.PyArray_NewFromDescr_(api.PyArray_Type_, float32, static_cast<int>(shape.rank()), dims,
                                                nullptr, nullptr, 0, nullptr);
    if (array == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::array>(array);
}

float* data_of(py::handle a) { return reinterpret_cast<float*>(py::detail::array_proxy(a.ptr())->data); }

// An uninitialised float32 CPU tensor: a NumPy array that torch.from_numpy wraps without a copy,
// called through the C API (pybind11's call builds an argument tuple per call).
py::object new_torch_tensor(const Torch& torch, const Shape& shape, float*& data) {
    const py::array array = new_float_array(shape);
    data = data_of(array);
    PyObject* tensor = PyObject_CallOneArg(torch.from_numpy.ptr(), array.ptr());
    if (tensor == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(tensor);
}

Kind kind_of(const char* name, py::handle h, const Torch*& torch) {
    if (py::isinstance<py::array>(h)) return Kind::numpy;
    if (torch == nullptr) torch = torch_if_imported();
    if (torch != nullptr && py::isinstance(h, torch->tensor_type)) return Kind::torch;
    type_error(name, h);
}

ConstTensor view(const char* name, py::handle h, Kind kind, const Torch* torch, std::size_t expected_rank = 3) {
    return kind == Kind::numpy ? numpy_view(name, h, expected_rank) : torch_view(name, h, *torch, expected_rank);
}

// An output the caller passed through out=: of the inputs' kind, float32, C-contiguous, writable
// and of exactly the shape the call writes (`what` says why that shape). Written in place.
float* provided_output(const char* name, py::handle h, Kind kind, const Torch*& torch, const Shape& expected,
                       const std::string& what) {
    if (kind_of(name, h, torch) != kind)
        throw py::type_error(
            std::string(name) + ": expected " +
            (kind == Kind::numpy ? "a NumPy array, as Q, K and V are" : "a torch.Tensor, as Q, K and V are") +
            ", got " + type_name(h));
    const ConstTensor t = view(name, h, kind, torch, expected.rank());
    if (kind == Kind::numpy) {
        if (!(py::detail::array_proxy(h.ptr())->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_))
            throw py::value_error(std::string(name) + ": expected a writable array, got a read-only one");
    } else if (!get_attr(h, torch->requires_grad).is(py::handle(Py_False))) {
        // torch refuses out= tensors that require grad: the write would bypass autograd.
        throw py::value_error(std::string(name) + ": expected a tensor that does not require grad (myattn records "
                                                  "no autograd graph)");
    }
    if (!(t.shape == expected))
        throw py::value_error(std::string(name) + ": expected shape " + expected.to_string() + " (" + what + "), got " +
                              t.shape.to_string());
    return const_cast<float*>(t.data);
}

py::tuple forward(const myattn::MyAttn& attn, py::handle Q, py::handle K, py::handle V, py::handle out) {
    const Torch* torch = nullptr;
    const Kind kind = kind_of("Q", Q, torch);
    const char* names[] = {"K", "V"};
    const py::handle others[] = {K, V};
    for (int i = 0; i < 2; ++i)
        if (kind_of(names[i], others[i], torch) != kind)
            throw py::type_error(std::string("Q, K and V must be all NumPy arrays or all torch tensors; got Q: ") +
                                 type_name(Q) + ", " + names[i] + ": " + type_name(others[i]));
    const ConstTensor q = view("Q", Q, kind, torch), k = view("K", K, kind, torch);
    // A torch.bfloat16 V runs through the library's bf16 overload, which refuses it, naming
    // the precision, unless the module's precision is bf16.
    const bool v_bf16 = kind == Kind::torch && is_bfloat16_tensor(V, *torch);
    const ConstTensor v = v_bf16 ? ConstTensor{} : view("V", V, kind, torch);
    const myattn::TensorView<const myattn::bfloat16> vb =
        v_bf16 ? torch_view_of<myattn::bfloat16>("V", V, *torch) : myattn::TensorView<const myattn::bfloat16>{};
    const auto run = [&](float* out_data, const Shape& o_shape, float* w_data, const Shape& w_shape) {
        if (v_bf16)
            attn.forward(q, k, vb, {out_data, o_shape}, {w_data, w_shape});
        else
            attn.forward(q, k, v, {out_data, o_shape}, {w_data, w_shape});
    };

    // The outputs are sized from Q the way the library reads it; a Q it would refuse never
    // sizes anything: the library reports it (and checks everything again before writing).
    const myattn::Dims& d = attn.dims();
    if (q.shape.rank() != 3 || q.shape[2] != d.query_size || (q.shape[0] != 1 && q.shape[1] != 1)) {
        run(nullptr, {}, nullptr, {});
        throw std::logic_error("myattn: forward accepted a Q it should have refused");
    }
    const bool dim1 = q.shape[1] != 1;
    const std::size_t B = dim1 ? q.shape[1] : q.shape[0], o = d.output_size, L = d.value_size1;
    const Shape o_shape = dim1 ? Shape{1, B, o} : Shape{B, 1, o}, w_shape{B, L};
    float *out_data = nullptr, *w_data = nullptr;
    if (out.is_none()) {
        py::object output, weights;
        if (kind == Kind::numpy) {
            output = new_float_array(o_shape), weights = new_float_array(w_shape);
            out_data = data_of(output), w_data = data_of(weights);
        } else {
            output = new_torch_tensor(*torch, o_shape, out_data), weights = new_torch_tensor(*torch, w_shape, w_data);
        }
        {
            py::gil_scoped_release unlocked;
            run(out_data, o_shape, w_data, w_shape);
        }
        return py::make_tuple(std::move(output), std::move(weights));
    }

    const bool is_tuple = PyTuple_Check(out.ptr()), is_list = PyList_Check(out.ptr());
    if (!is_tuple && !is_list)
        throw py::type_error("out: expected a tuple (output, attn_weights), got " + type_name(out));
    const py::sequence outs = py::reinterpret_borrow<py::sequence>(out);
    if (outs.size() != 2)
        throw py::value_error("out: expected 2 tensors (output, attn_weights), got " + std::to_string(outs.size()));
    const py::object output = outs[0], weights = outs[1];
    out_data = provided_output("out[0]", output, kind, torch, o_shape,
                               dim1 ? "output, as Q is [1, B, q]" : "output, as Q is [B, 1, q]");
    w_data = provided_output("out[1]", weights, kind, torch, w_shape, "attn_weights, [B, L]");
    try {
        py::gil_scoped_release unlocked;
        run(out_data, o_shape, w_data, w_shape);
    } catch (const myattn::ArgumentError& e) {
        // The library refuses outputs that share memory with an input or with each other.
        throw myattn::ArgumentError("out: " + std::string(e.what()) +
                                    " (the outputs must not share memory with Q, K, V or each other)");
    }
    return is_tuple ? py::reinterpret_borrow<py::tuple>(out) : py::make_tuple(output, weights);
}

// forward looped in C++ on the same inputs, outputs allocated once: the yardstick of
// `python3 -m myattn bench` for what the Python call adds. Returns seconds for `calls` calls.
double forward_loop(const myattn::MyAttn& attn, py::handle Q, py::handle K, py::handle V, std::size_t calls) {
    const py::tuple first = forward(attn, Q, K, V, py::none()); // checks everything, sizes the outputs
    if (!py::isinstance<py::array>(Q)) throw py::type_error("_forward_loop: NumPy arrays only");
    const ConstTensor q = numpy_view("Q", Q), k = numpy_view("K", K), v = numpy_view("V", V);
    const py::array out = first[0], w = first[1];
    const myattn::MutableTensor o_view{data_of(out), numpy_view("output", out).shape};
    const myattn::MutableTensor w_view{data_of(w), numpy_view("attn_weights", w, 2).shape};
    py::gil_scoped_release unlocked;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < calls; ++i) attn.forward(q, k, v, o_view, w_view);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

py::dict dims_dict(const myattn::Dims& d) {
    py::dict r;
    r["query_size"] = d.query_size;
    r["key_size"] = d.key_size;
    r["value_size1"] = d.value_size1;
    r["value_size2"] = d.value_size2;
    r["output_size"] = d.output_size;
    return r;
}

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

std::span<const float> span_of(const FloatArray& a) { return {a.data(), static_cast<std::size_t>(a.size())}; }

py::dict info() {
    py::dict r;
    std::vector<std::string> compiled, runnable;
    for (auto isa : myattn::compiled_isas()) compiled.emplace_back(myattn::isa_name(isa));
    for (auto isa : myattn::runnable_isas()) runnable.emplace_back(myattn::isa_name(isa));
    r["version"] = myattn::version_string;
    r["cpu_features"] = myattn::to_string(myattn::cpu_features());
    r["compiled_isas"] = compiled;
    r["runnable_isas"] = runnable;
    r["isa"] = std::string(myattn::isa_name(myattn::active_isa()));
    r["isa_reason"] = myattn::active_isa_reason();
    r["kernel_id"] = std::string(myattn::kernel_id(myattn::active_isa()));
    // Per precision, the kernels the default ISA runs it with.
    py::dict kernel_ids;
    std::vector<std::string> precisions;
    for (auto p : myattn::precisions()) {
        precisions.emplace_back(myattn::precision_name(p));
        if (const auto id = myattn::kernel_id(myattn::active_isa(), p)) kernel_ids[py::str(precisions.back())] = *id;
    }
    r["precisions"] = precisions;
    r["kernel_ids"] = kernel_ids;
    return r;
}

} // namespace

PYBIND11_MODULE(_myattn, m) {
    m.doc() = "myattn's compiled core; use the myattn package";
    // Subclasses of ValueError / OSError, so that generic handlers catch them too.
    py::register_exception<myattn::ShapeError>(m, "ShapeError", PyExc_ValueError);
    py::register_exception<myattn::ArgumentError>(m, "ArgumentError", PyExc_ValueError);
    py::register_exception<myattn::IsaError>(m, "IsaError", PyExc_ValueError);
    py::register_exception<myattn::FileError>(m, "FileError", PyExc_OSError);

    m.def("info", &info, "Version, CPU features, ISAs compiled in and runnable, the active one and why.");

    py::class_<myattn::MyAttn>(m, "Module", "A MyAttn module, its weights packed for one ISA.")
        .def(py::init([](const std::string& path, std::optional<std::size_t> query_size,
                         const std::optional<std::string>& isa, const std::string& prefix,
                         const std::optional<std::string>& precision) {
                 return myattn::MyAttn(myattn::Parameters::load(path, query_size, prefix), isa_from_name(isa),
                                       precision_from_name(precision));
             }),
             py::arg("path"), py::arg("query_size"), py::arg("isa"), py::arg("prefix"), py::arg("precision"))
        .def(py::init([](std::size_t q, const FloatArray& w1, const FloatArray& b1, const FloatArray& w2,
                         const FloatArray& b2, const std::optional<std::string>& isa,
                         const std::optional<std::string>& precision) {
                 // nn.Linear's shapes give k, L, d, o once q is known; Parameters checks the sizes.
                 if (w1.ndim() != 2 || w2.ndim() != 2 || w1.shape(1) <= py::ssize_t(q) || w2.shape(1) <= py::ssize_t(q))
                     throw myattn::ShapeError("attn.weight and attn_combine.weight: expected [L, q+k] and [o, q+d] "
                                              "with q=" +
                                              std::to_string(q) + ", got ranks " + std::to_string(w1.ndim()) + " and " +
                                              std::to_string(w2.ndim()));
                 const myattn::Dims d{q, std::size_t(w1.shape(1)) - q, std::size_t(w1.shape(0)),
                                      std::size_t(w2.shape(1)) - q, std::size_t(w2.shape(0))};
                 return myattn::MyAttn(myattn::Parameters(d, span_of(w1), span_of(b1), span_of(w2), span_of(b2)),
                                       isa_from_name(isa), precision_from_name(precision));
             }),
             py::arg("query_size"), py::arg("attn_weight"), py::arg("attn_bias"), py::arg("combine_weight"),
             py::arg("combine_bias"), py::arg("isa"), py::arg("precision"))
        .def("forward", &forward, py::arg("Q"), py::arg("K"), py::arg("V"), py::kw_only(), py::arg("out") = py::none(),
             "(output, attn_weights) for Q, K, V (NumPy arrays or CPU torch tensors, float32, contiguous); with "
             "out=(output, attn_weights), written into those and returned.")
        .def("_forward_loop", &forward_loop, py::arg("Q"), py::arg("K"), py::arg("V"), py::arg("calls"))
        .def("__call__", &forward, py::arg("Q"), py::arg("K"), py::arg("V"), py::kw_only(), py::arg("out") = py::none())
        .def_property_readonly("dims", [](const myattn::MyAttn& a) { return dims_dict(a.dims()); })
        .def_property_readonly("isa", [](const myattn::MyAttn& a) { return std::string(myattn::isa_name(a.isa())); })
        .def_property_readonly(
            "precision", [](const myattn::MyAttn& a) { return std::string(myattn::precision_name(a.precision())); })
        .def_property_readonly("kernel_id", [](const myattn::MyAttn& a) { return std::string(a.kernel_id()); })
        .def_property_readonly("plan", &myattn::MyAttn::plan)
        .def("__repr__", [](const myattn::MyAttn& a) {
            return "myattn.MyAttn(" + a.dims().to_string() + ", isa=" + std::string(myattn::isa_name(a.isa())) +
                   ", precision=" + std::string(myattn::precision_name(a.precision())) + ")";
        });
}
