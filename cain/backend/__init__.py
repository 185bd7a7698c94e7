"""The back end: `Program` <-> scamp5 IR, register allocation, simulation, verification and C."""
