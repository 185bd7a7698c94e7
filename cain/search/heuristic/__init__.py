"""The heuristic search: the reverse traversal of goal-bags (`worker`), first plans from a kernel's factors
(`structure`) and from compiling the kernels one at a time (`kernel_by_kernel`)."""
