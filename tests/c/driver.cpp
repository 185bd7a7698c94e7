// Runs an emitted kernel on planes read from stdin: `driver IN1 [IN2 ...] -- OUT1 [OUT2 ...]`.
// Reads N*N numbers per input register (row by row), fills the other registers with garbage, calls
// the kernel function CAIN_KERNEL (from the emitted file CAIN_SOURCE) and prints each output register.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scamp5.hpp"
#include CAIN_SOURCE

using namespace SCAMP5_PE;

int main(int argc, char** argv) {
    std::vector<std::string> inputs, outputs;
    bool out = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--") out = true;
        else (out ? outputs : inputs).push_back(a);
    }
    std::srand(1);
    for (auto& plane : planes())
        for (auto& v : plane) v = std::rand() % 256 - 128;  // garbage
    for (auto& name : inputs) {
        Plane p(N * N);
        for (auto& v : p)
            if (std::scanf("%lf", &v) != 1) return 2;
        write(register_named(name), p);
    }
    CAIN_KERNEL();
    for (auto& name : outputs) {
        Plane p = read(register_named(name));
        for (int i = 0; i < N * N; i++) std::printf("%.17g%c", p[i], (i + 1) % N ? ' ' : '\n');
    }
    return 0;
}
