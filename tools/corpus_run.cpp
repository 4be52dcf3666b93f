// Running the host corpus: inputs, realisation on both devices, comparison.
#include <polygrad/error.hpp>
#include <polygrad/plugin.hpp>
#include <polygrad/registry.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "corpus.hpp"

namespace polygrad::cli {

namespace {

double half_to_double(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v = exponent == 0    ? std::ldexp(mantissa, -24)
             : exponent == 31 ? (mantissa ? std::numeric_limits<double>::quiet_NaN()
                                          : std::numeric_limits<double>::infinity())
                              : std::ldexp(mantissa | 0x400, exponent - 25);
  return (h & 0x8000) ? -v : v;
}

double bfloat16_to_double(uint16_t h) {
  uint32_t bits = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Element `i` of packed `bytes` of dtype `dt`, as a double (64-bit ints: exactly enough for
/// the corpus's small values).
double element(pg_dtype dt, const std::vector<unsigned char>& bytes, size_t i) {
  const unsigned char* p = bytes.data() + i * sdk::dtype_size(dt);
  auto read = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  switch (dt) {
    case PG_DTYPE_BOOL:
      return *p != 0;
    case PG_DTYPE_INT8:
      return read(int8_t{});
    case PG_DTYPE_INT16:
      return read(int16_t{});
    case PG_DTYPE_INT32:
      return read(int32_t{});
    case PG_DTYPE_INT64:
      return read(int64_t{});
    case PG_DTYPE_UINT8:
      return read(uint8_t{});
    case PG_DTYPE_UINT16:
      return read(uint16_t{});
    case PG_DTYPE_UINT32:
      return read(uint32_t{});
    case PG_DTYPE_UINT64:
      return read(uint64_t{});
    case PG_DTYPE_FLOAT16:
      return half_to_double(static_cast<uint16_t>(read(uint16_t{})));
    case PG_DTYPE_BFLOAT16:
      return bfloat16_to_double(static_cast<uint16_t>(read(uint16_t{})));
    case PG_DTYPE_FLOAT32:
      return read(float{});
    default:
      return read(double{});
  }
}

/// Machine epsilon of a float dtype.
double epsilon(pg_dtype dt) {
  switch (dt) {
    case PG_DTYPE_FLOAT16:
      return 0x1p-10;
    case PG_DTYPE_BFLOAT16:
      return 0x1p-7;
    case PG_DTYPE_FLOAT32:
      return 0x1p-23;
    default:
      return 0x1p-52;
  }
}

/// A realised result, packed on the host.
struct Result {
  pg_dtype dtype = PG_DTYPE_VOID;
  Tensor::Shape shape;
  std::vector<unsigned char> bytes;
};

Result realise(const CorpusCase& c, const std::string& device, pg_dtype dtype) {
  CaseInputs in(device, dtype);
  Tensor t = c.build(in);
  Result r{t.dtype(), t.shape(), {}};
  r.bytes.resize(static_cast<size_t>(t.numel() * t.element_size()));
  t.copy_to_host(r.bytes.data(), r.bytes.size());
  return r;
}

/// "" when `got` matches `want`, else the first difference. Ints and bools match exactly;
/// floats have the same NaNs and infinities and an RMS error relative to the reference's RMS
/// (its norm, or 1 where it is below 1) of at most `epsilons` epsilons of the dtype.
std::string compare(const Result& got, const Result& want, double epsilons) {
  if (got.dtype != want.dtype || got.shape != want.shape)
    return std::string("result is ") + sdk::dtype_name(got.dtype) + " of " +
           std::to_string(got.shape.size()) + " dims, the reference's " +
           sdk::dtype_name(want.dtype) + " of " + std::to_string(want.shape.size());
  const size_t n = want.bytes.size() / std::max<uint32_t>(1, sdk::dtype_size(want.dtype));
  const bool is_float = sdk::dtype_is_float(want.dtype);
  double err2 = 0, norm2 = 0;
  size_t worst = n;
  double worst_err = -1;
  for (size_t i = 0; i < n; ++i) {
    const double g = element(got.dtype, got.bytes, i), w = element(want.dtype, want.bytes, i);
    auto differs = [&] {
      return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " +
             std::to_string(w);
    };
    if (!is_float) {
      if (g != w) return differs();
      continue;
    }
    if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
      if (!(std::isnan(w) && std::isnan(g)) && g != w) return differs();
      continue;
    }
    err2 += (g - w) * (g - w);
    norm2 += w * w;
    if (std::fabs(g - w) > worst_err) {
      worst_err = std::fabs(g - w);
      worst = i;
    }
  }
  if (!is_float || n == 0) return "";
  const double rms_err = std::sqrt(err2 / static_cast<double>(n));
  const double scale = std::max(1.0, std::sqrt(norm2 / static_cast<double>(n)));
  const double allowed = epsilons * epsilon(want.dtype) * scale;
  if (rms_err <= allowed) return "";
  return "RMS error " + std::to_string(rms_err) + " exceeds " + std::to_string(allowed) +
         "; worst at element " + std::to_string(worst) + ": got " +
         std::to_string(element(got.dtype, got.bytes, worst)) + ", want " +
         std::to_string(element(want.dtype, want.bytes, worst));
}

/// The capability the host says `device` lacks ("int64" from "device x:0 lacks int64, needed
/// by kernel ..."), or "" when `e` is another error.
std::string lacked_capability(const Error& e, const std::string& device) {
  const std::string prefix = "device " + device + " lacks ";
  const std::string what = e.what();
  if (e.kind() != ErrorKind::user || e.status() != PG_ERR_UNSUPPORTED || what.rfind(prefix, 0) != 0)
    return "";
  return what.substr(prefix.size(), what.find(',', prefix.size()) - prefix.size());
}

}  // namespace

Tensor CaseInputs::make(const Tensor::Shape& shape, pg_dtype dtype, bool positive) {
  const int s = slot_++;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  const char kind = sdk::dtype_kind(dtype);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = (i * 37 + s * 11) % 101, m = (i * 7 + s * 5) % 17;
    double x = kind == 'f'   ? (positive ? k / 25.0 + 0.1 : k / 25.0 - 2.0)
               : kind == 'b' ? static_cast<double>((i * 5 + s) % 3 == 0)
               : positive    ? static_cast<double>(1 + m % 16)
               : kind == 'u' ? static_cast<double>(m)
                             : static_cast<double>(m - 8);
    v[static_cast<size_t>(i)] = x;
  }
  if (dtype == PG_DTYPE_FLOAT16 || dtype == PG_DTYPE_BFLOAT16)
    return Tensor(std::vector<float>(v.begin(), v.end()), shape, device_).cast(dtype);
  std::vector<unsigned char> bytes(static_cast<size_t>(n) * sdk::dtype_size(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char* p = bytes.data() + i * sdk::dtype_size(dtype);
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
    switch (dtype) {
      case PG_DTYPE_BOOL:
        put(static_cast<uint8_t>(v[i] != 0));
        break;
      case PG_DTYPE_INT8:
        put(static_cast<int8_t>(v[i]));
        break;
      case PG_DTYPE_INT16:
        put(static_cast<int16_t>(v[i]));
        break;
      case PG_DTYPE_INT32:
        put(static_cast<int32_t>(v[i]));
        break;
      case PG_DTYPE_INT64:
        put(static_cast<int64_t>(v[i]));
        break;
      case PG_DTYPE_UINT8:
        put(static_cast<uint8_t>(v[i]));
        break;
      case PG_DTYPE_UINT16:
        put(static_cast<uint16_t>(v[i]));
        break;
      case PG_DTYPE_UINT32:
        put(static_cast<uint32_t>(v[i]));
        break;
      case PG_DTYPE_UINT64:
        put(static_cast<uint64_t>(v[i]));
        break;
      case PG_DTYPE_FLOAT32:
        put(static_cast<float>(v[i]));
        break;
      default:
        put(v[i]);
        break;
    }
  }
  return Tensor::from_host(bytes.data(), dtype, shape, device_);
}

Tensor CaseInputs::indices(const Tensor::Shape& shape, int64_t bound, pg_dtype dtype) {
  const int s = slot_++;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 7 + s * 3) % bound;
  if (dtype == PG_DTYPE_INT64) return Tensor(v, shape, device_);
  std::vector<int32_t> v32(v.begin(), v.end());
  return Tensor(v32, shape, device_);
}

conformance::SuiteResult run_corpus(const std::string& device, const std::string& reference) {
  conformance::SuiteResult out;
  out.note = "graphs lowered by the host's codegen for " + device + ", compared with " + reference +
             (device == reference ? " (the device itself: values are not checked)" : "");
  out.table_legend =
      "host corpus x dtype (ok, FAIL, unsupported = the device lacks a capability the host's "
      "kernels need, - = dtype not declared)";
  const DeviceProperties props = Registry::global().device(device).properties();
  for (const CorpusCase& c : corpus_cases()) {
    conformance::TableRow row;
    row.name = c.name;
    for (pg_dtype dt : c.dtypes) {
      if (!props.supports(dt)) continue;
      const std::string check = std::string(c.name) + " " + sdk::dtype_name(dt);
      Result got, want;
      try {
        got = realise(c, device, dt);
      } catch (const Error& e) {
        const std::string lacks = lacked_capability(e, device);
        if (!lacks.empty()) {
          out.checks.push_back(
              {check, conformance::Status::skip, "unsupported (lacks " + lacks + ")"});
          row.cells[dt] = conformance::Cell::unsupported;
        } else {
          out.checks.push_back({check, conformance::Status::fail, e.what()});
          row.cells[dt] = conformance::Cell::fail;
        }
        continue;
      } catch (const std::exception& e) {
        out.checks.push_back(
            {check, conformance::Status::fail, std::string("internal error: ") + e.what()});
        row.cells[dt] = conformance::Cell::fail;
        continue;
      }
      try {
        want = realise(c, reference, dt);
      } catch (const std::exception& e) {
        out.checks.push_back({check, conformance::Status::skip,
                              "the reference " + reference + " failed: " + e.what()});
        continue;
      }
      std::string diff = compare(got, want, c.epsilons);
      out.checks.push_back(
          {check, diff.empty() ? conformance::Status::pass : conformance::Status::fail, diff});
      row.cells[dt] = diff.empty() ? conformance::Cell::ok : conformance::Cell::fail;
    }
    out.table.push_back(std::move(row));
  }
  return out;
}

}  // namespace polygrad::cli
