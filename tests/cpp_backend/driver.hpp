// tests/cpp_backend/driver.hpp - what the test programs of tests/integration/test_cpp_backend.cpp
// include before the generated models: a tiny .npy reader / writer and run_model(), which runs one
// generated Session on .npy inputs and writes its outputs as .npy files. Test-only code; the
// generated models themselves need nothing but the standard library.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace graft_driver {

/// A little-endian C-order .npy file of float32, float64 or an integer / bool type, as floats (the
/// generated code takes an integer input's values as exact floats).
inline std::vector<float> read_npy(const std::string& path, std::vector<std::int64_t>& shape) {
    std::ifstream in(path, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + ": not a .npy file");
    const int major = static_cast<unsigned char>(data[6]);
    std::size_t hlen = 0, start = 0;
    if (major == 1) {
        hlen = static_cast<unsigned char>(data[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(data[9])) << 8);
        start = 10;
    } else {
        for (int i = 0; i < 4; ++i) hlen |= static_cast<std::size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
        start = 12;
    }
    const std::string header = data.substr(start, hlen);
    const char* kinds[] = {"'<f4'", "'<f8'", "'<i8'", "'<i4'", "'<u2'", "'|u1'", "'|i1'", "'|b1'"};
    const std::size_t sizes[] = {4, 8, 8, 4, 2, 1, 1, 1};
    int kind = -1;
    for (int k = 0; k < 8 && kind < 0; ++k)
        if (header.find(kinds[k]) != std::string::npos) kind = k;
    if (kind < 0) throw std::runtime_error(path + ": not float32, float64 or an integer or bool type");
    if (header.find("'fortran_order': True") != std::string::npos) throw std::runtime_error(path + ": Fortran order");
    shape.clear();
    const auto open = header.find('(', header.find("'shape'"));
    const auto close = header.find(')', open);
    std::string dims = header.substr(open + 1, close - open - 1);
    std::int64_t count = 1;
    for (std::size_t p = 0; p < dims.size();) {
        while (p < dims.size() && (dims[p] < '0' || dims[p] > '9')) ++p;
        if (p >= dims.size()) break;
        std::int64_t d = 0;
        while (p < dims.size() && dims[p] >= '0' && dims[p] <= '9') d = d * 10 + (dims[p++] - '0');
        shape.push_back(d);
        count *= d;
    }
    const std::size_t body = start + hlen, elem = sizes[kind];
    if (data.size() != body + static_cast<std::size_t>(count) * elem) throw std::runtime_error(path + ": truncated");
    std::vector<float> out(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char* p = data.data() + body + i * elem;
        auto get = [&](auto v) {
            std::memcpy(&v, p, sizeof v);
            return static_cast<float>(v);
        };
        switch (kind) {
            case 0: out[i] = get(float{}); break;
            case 1: out[i] = get(double{}); break;
            case 2: out[i] = get(std::int64_t{}); break;
            case 3: out[i] = get(std::int32_t{}); break;
            case 4: out[i] = get(std::uint16_t{}); break;
            case 5: out[i] = get(std::uint8_t{}); break;
            case 6: out[i] = get(std::int8_t{}); break;
            default: out[i] = p[0] ? 1.f : 0.f; break;
        }
    }
    return out;
}

inline void write_npy(const std::string& path, const float* data, int rank, const std::int64_t* shape) {
    std::string dims;
    std::int64_t count = 1;
    for (int i = 0; i < rank; ++i) {
        dims += std::to_string(shape[i]) + (rank == 1 || i + 1 < rank ? "," : "");
        count *= shape[i];
    }
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff), static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(len), 2);
    out << header;
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * 4));
    if (!out) throw std::runtime_error("cannot write " + path);
}

/// Runs generated model NS (Session, kInputs, kOutputs) on the inputs (in model order) and
/// writes OUT_DIR/<i>.npy for output i. Returns 0, or 1 after printing what failed.
template <class Session, class Info, std::size_t NI, std::size_t NO, class... SessionArgs>
int run_model(const char* label, const Info (&inputs)[NI], const Info (&outputs)[NO], const std::vector<std::string>& files,
              const std::string& out_dir, SessionArgs... args) {
    try {
        Session session(args...);
        std::vector<std::vector<float>> in(NI), out(NO);
        std::vector<const float*> in_ptrs;
        std::vector<float*> out_ptrs;
        for (std::size_t i = 0; i < NI; ++i) {
            std::vector<std::int64_t> shape;
            in[i] = read_npy(files.at(i), shape);
            if (in[i].size() != inputs[i].size)
                throw std::runtime_error(files[i] + " holds " + std::to_string(in[i].size()) + " values, input '" + inputs[i].name +
                                         "' takes " + std::to_string(inputs[i].size));
            in_ptrs.push_back(in[i].data());
        }
        for (std::size_t i = 0; i < NO; ++i) {
            out[i].assign(outputs[i].size, -12345.f);
            out_ptrs.push_back(out[i].data());
        }
        session.run(in_ptrs.data(), out_ptrs.data());
        for (std::size_t i = 0; i < NO; ++i)
            write_npy(out_dir + "/" + std::to_string(i) + ".npy", out[i].data(), outputs[i].rank, outputs[i].shape);
        return 0;
    } catch (const std::exception& e) {
        std::printf("%s: %s\n", label, e.what());
        return 1;
    }
}

}  // namespace graft_driver
