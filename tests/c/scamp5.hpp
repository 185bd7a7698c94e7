// A stand-in for the SCAMP-5d SDK's analogue kernel API, for testing emitted code on a PC.
// Every register is a SCAMP5_SIZE x SCAMP5_SIZE plane of doubles (row 0 to the north). The bus
// micro-operations follow reference/scamp5.md section 2 exactly: all sources are read before any
// destination is written, busN writes -(sum of sources)/N to each of its N destinations, and XN..XW
// name the NEWS register of the neighbour on that side. A PE beyond the array reads as 0, and a NEWS
// register that no neighbour writes becomes 0. The macros are written out as their SDK expansions.
#pragma once

#include <array>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef SCAMP5_SIZE
#define SCAMP5_SIZE 32
#endif

namespace SCAMP5_PE {

constexpr int N = SCAMP5_SIZE;
using Plane = std::vector<double>;  // N * N, index row * N + column

enum dir_t { north, east, south, west };

struct areg_t {
    int id;  // 0..5 for A..F, 6 for NEWS, 7..10 for XN, XE, XS, XW
};

const areg_t A{0}, B{1}, C{2}, D{3}, E{4}, F{5}, NEWS{6}, XN{7}, XE{8}, XS{9}, XW{10};

inline std::array<Plane, 7>& planes() {
    static std::array<Plane, 7> p = [] {
        std::array<Plane, 7> init;
        for (auto& plane : init) plane.assign(N * N, 0.0);
        return init;
    }();
    return p;
}

// the offset (columns east, rows south) of the neighbour on a side
inline void side_offset(int side, int& dc, int& dr) {
    const int dcs[] = {0, 1, 0, -1}, drs[] = {-1, 0, 1, 0};  // north, east, south, west
    dc = dcs[side];
    dr = drs[side];
}

// b[p] = a[p + neighbour offset], 0 beyond the edge
inline Plane from_side(const Plane& a, int side, bool opposite = false) {
    int dc, dr;
    side_offset(side, dc, dr);
    if (opposite) { dc = -dc; dr = -dr; }
    Plane b(N * N, 0.0);
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++) {
            int rr = r + dr, cc = c + dc;
            if (rr >= 0 && rr < N && cc >= 0 && cc < N) b[r * N + c] = a[rr * N + cc];
        }
    return b;
}

inline Plane read(areg_t s) {
    if (s.id <= 6) return planes()[s.id];
    return from_side(planes()[6], s.id - 7);  // the neighbour's NEWS
}

inline void write(areg_t d, const Plane& v) {
    if (d.id <= 6) {
        planes()[d.id] = v;
    } else {
        // every PE writes into its neighbour's NEWS on side d: NEWS[q] = v[q - offset(d)]
        planes()[6] = from_side(v, d.id - 7, true);
    }
}

inline void check(std::initializer_list<areg_t> dests, std::initializer_list<areg_t> srcs) {
    std::vector<int> seen;
    for (auto r : dests) seen.push_back(r.id);
    for (auto r : srcs) seen.push_back(r.id);
    for (size_t i = 0; i < seen.size(); i++)
        for (size_t j = i + 1; j < seen.size(); j++)
            if (seen[i] == seen[j]) throw std::runtime_error("a register appears twice in one bus micro-op");
}

// The SDK records a kernel's ICWs on a stack of ICW_STACK_CAP shared by the kernels that stay recorded
// (a kernel that calls move_to_heap(true) leaves it once recorded); past the cap the SDK drops ICWs
// silently, so here a kernel that does not fit is an error (scamp5_kernel_end, below).
#ifndef SCAMP5_ICW_STACK_CAP
#define SCAMP5_ICW_STACK_CAP 1024
#endif
#ifndef SCAMP5_ICW_STACK_TAKEN
#define SCAMP5_ICW_STACK_TAKEN 0  // ICWs of the host's own kernels recorded before (get_image's, say)
#endif

struct icw_stack_t {
    int top = SCAMP5_ICW_STACK_TAKEN;  // ICWs of the kernels that stay on the stack
    int counter = -1;   // ICWs of the kernel being recorded, -1 outside a kernel
    bool to_heap = false;
};

inline icw_stack_t& icw_stack() {
    static icw_stack_t s;
    return s;
}

inline void count_icw() {
    if (icw_stack().counter < 0) throw std::runtime_error("a bus micro-operation outside a kernel");
    icw_stack().counter++;
}

inline void bus_n(std::initializer_list<areg_t> dests, std::initializer_list<areg_t> srcs) {
    check(dests, srcs);
    count_icw();
    Plane sum(N * N, 0.0);
    for (auto s : srcs) {
        Plane v = read(s);
        for (int i = 0; i < N * N; i++) sum[i] += v[i];
    }
    const double n = static_cast<double>(dests.size());
    for (int i = 0; i < N * N; i++) sum[i] = -sum[i] / n;
    for (auto d : dests) write(d, sum);
}

// -- bus micro-operations --------------------------------------------------------------------------
inline void bus(areg_t a) { bus_n({a}, {}); }
inline void bus(areg_t a, areg_t s0) { bus_n({a}, {s0}); }
inline void bus(areg_t a, areg_t s0, areg_t s1) { bus_n({a}, {s0, s1}); }
inline void bus(areg_t a, areg_t s0, areg_t s1, areg_t s2) { bus_n({a}, {s0, s1, s2}); }
inline void bus(areg_t a, areg_t s0, areg_t s1, areg_t s2, areg_t s3) { bus_n({a}, {s0, s1, s2, s3}); }
inline void bus2(areg_t a, areg_t b) { bus_n({a, b}, {}); }
inline void bus2(areg_t a, areg_t b, areg_t s0) { bus_n({a, b}, {s0}); }
inline void bus2(areg_t a, areg_t b, areg_t s0, areg_t s1) { bus_n({a, b}, {s0, s1}); }
inline void bus3(areg_t a, areg_t b, areg_t c, areg_t s0) { bus_n({a, b, c}, {s0}); }

// -- macros, as the SDK expands them (reference/scamp5.md section 4) --------------------------------
inline areg_t x_of(dir_t d) { return areg_t{7 + d}; }                    // X(d)
inline areg_t x_opp(dir_t d) { return areg_t{7 + (d + 2) % 4}; }          // X(opposite of d)

inline void res(areg_t a) { bus(NEWS); bus(a, NEWS); }
inline void res(areg_t a, areg_t b) { bus(NEWS); bus(a, NEWS); bus(b, NEWS); }
inline void mov(areg_t y, areg_t x) { bus(NEWS, x); bus(y, NEWS); }
inline void movx(areg_t y, areg_t x, dir_t d) { bus(x_opp(d), x); bus(y, NEWS); }
inline void mov2x(areg_t y, areg_t x, dir_t d1, dir_t d2) { bus(x_opp(d1), x); bus(y, x_of(d2)); }
inline void add(areg_t y, areg_t x0, areg_t x1) { bus(NEWS, x0, x1); bus(y, NEWS); }
inline void add(areg_t y, areg_t x0, areg_t x1, areg_t x2) { bus(NEWS, x0, x1, x2); bus(y, NEWS); }
inline void addx(areg_t y, areg_t x0, areg_t x1, dir_t d) { bus(x_opp(d), x0, x1); bus(y, NEWS); }
inline void add2x(areg_t y, areg_t x0, areg_t x1, dir_t d1, dir_t d2) { bus(x_opp(d1), x0, x1); bus(y, x_of(d2)); }
inline void sub(areg_t y, areg_t x0, areg_t x1) { bus(NEWS, x0); bus(y, NEWS, x1); }
inline void subx(areg_t y, areg_t x0, dir_t d, areg_t x1) { bus(x_opp(d), x0); bus(y, NEWS, x1); }
inline void sub2x(areg_t y, areg_t x0, dir_t d1, dir_t d2, areg_t x1) { bus(x_opp(d1), x0); bus(y, x_of(d2), x1); }
inline void neg(areg_t y, areg_t x) { bus(NEWS); bus(y, NEWS, x); }
inline void divq(areg_t y, areg_t x) { bus2(y, NEWS, x); bus(y, NEWS); }
inline void div(areg_t y0, areg_t y1, areg_t y2) { bus2(y0, y1, y2); bus(NEWS, y2, y1); bus(y2, NEWS, y0); bus2(y0, y1, y2); bus(y0, y1); }
inline void div(areg_t y0, areg_t y1, areg_t y2, areg_t x) { bus2(y0, y1, x); bus(NEWS, x, y1); bus(y2, NEWS, y0); bus2(y0, y1, y2); bus(y0, y1); }
inline void diva(areg_t y0, areg_t y1, areg_t y2) { bus2(y1, y2, y0); bus(NEWS, y1, y0); bus(y0, NEWS, y2); bus2(y1, y2, y0); bus(y0, y1); }

// -- kernel recording (on the device the kernel is stored and replayed; here it runs at once) ------
inline void scamp5_kernel_begin() {
    if (icw_stack().counter >= 0) throw std::runtime_error("scamp5_kernel_begin inside a kernel");
    icw_stack().counter = 0;
    icw_stack().to_heap = false;
}

inline void scamp5_kernel_end() {
    icw_stack_t& s = icw_stack();
    if (s.counter < 0) throw std::runtime_error("scamp5_kernel_end outside a kernel");
    if (s.top + s.counter > SCAMP5_ICW_STACK_CAP)
        throw std::runtime_error("a kernel of " + std::to_string(s.counter) + " ICWs overflows the ICW stack (" +
                                 std::to_string(s.top) + " of " + std::to_string(SCAMP5_ICW_STACK_CAP) + " taken)");
    if (!s.to_heap) s.top += s.counter;
    s.counter = -1;
}

inline areg_t register_named(const std::string& name) {
    const char* names[] = {"A", "B", "C", "D", "E", "F", "NEWS"};
    for (int i = 0; i < 7; i++)
        if (name == names[i]) return areg_t{i};
    throw std::runtime_error("unknown register " + name);
}

}  // namespace SCAMP5_PE

namespace scamp5_kernel_api {
inline void move_to_heap(bool k) {
    if (SCAMP5_PE::icw_stack().counter < 0) throw std::runtime_error("move_to_heap outside a kernel");
    SCAMP5_PE::icw_stack().to_heap = k;
}
}  // namespace scamp5_kernel_api
