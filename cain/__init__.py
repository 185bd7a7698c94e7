"""Cain: a compiler from convolution kernels to SCAMP-5 focal-plane sensor-processor code."""
